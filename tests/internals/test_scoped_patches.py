"""A library attribute replaced only while a block runs, counted over nested and concurrent blocks."""

import threading

from common.internals.scoped_patches import ScopedPatch, all_active


class _Base:
    def inherited(self):
        return "base"


class _Library(_Base):
    def own(self):
        return "library"


def test_the_replacement_is_in_place_only_inside_and_nested_blocks_are_counted():
    patch = ScopedPatch(_Library, "own", lambda self: "patched")
    assert _Library().own() == "library" and not patch.in_place
    with patch.active():
        assert _Library().own() == "patched"
        with patch.active():
            assert _Library().own() == "patched"
        assert _Library().own() == "patched"
    assert _Library().own() == "library" and not patch.in_place
    assert vars(_Library)["own"] is patch.original


def test_an_inherited_attribute_is_deleted_again_not_copied_onto_the_class():
    patch = ScopedPatch(_Library, "inherited", lambda self: "patched")
    with patch.active():
        assert _Library().inherited() == "patched"
    assert "inherited" not in vars(_Library)
    assert _Library().inherited() == "base"


def test_a_failure_inside_the_block_still_puts_the_library_back():
    patch = ScopedPatch(_Library, "own", lambda self: "patched")
    try:
        with patch.active():
            raise ValueError("inside")
    except ValueError:
        pass
    assert _Library().own() == "library"


def test_a_thread_leaving_keeps_the_patch_for_another_still_inside():
    patch = ScopedPatch(_Library, "own", lambda self: "patched")
    inside, leave, seen = threading.Event(), threading.Event(), []

    def other():
        with patch.active():
            inside.set()
            leave.wait(10)
    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with patch.active():
        pass
    seen.append(_Library().own())  # (the other thread is still inside)
    leave.set()
    thread.join()
    assert seen == ["patched"] and _Library().own() == "library"


def test_all_active_enters_each():
    first = ScopedPatch(_Library, "own", lambda self: "first")
    second = ScopedPatch(_Base, "inherited", lambda self: "second")
    with all_active([first, second]):
        assert (_Library().own(), _Library().inherited()) == ("first", "second")
    assert (_Library().own(), _Library().inherited()) == ("library", "base")
