"""An attribute of TensorFlow's or Keras's replaced only while the framework runs code that needs it.

Some TF1 and Keras behaviour inside model_fn can only be had by replacing a
library's attribute (TensorFlow offers no hook for it). A ScopedPatch puts
the replacement in place while at least one `active()` block is entered, in
any thread, and puts the library's own back when the last one leaves: plain
TensorFlow code outside those blocks sees the library as it was. While a
block runs in one thread, other threads see the replacement too, so each
replacement acts only where the framework's state says it is wanted (a
model_fn call of this thread) and otherwise does what the library's own did.
"""

import contextlib
import threading

_MISSING = object()


class ScopedPatch:
    """owner.name (a class's or a module's attribute) is `replacement` while active() is entered anywhere.

    Args:
      owner: the class or module holding the attribute.
      name: the attribute's name.
      replacement: what it is while active (a function, or a descriptor such as a property).
    """

    def __init__(self, owner, name, replacement):
        self.owner, self.name, self.replacement = owner, name, replacement
        self.original = vars(owner).get(name, _MISSING)  # (an inherited attribute is deleted again, not copied)
        self._entered = 0
        self._lock = threading.Lock()

    @property
    def in_place(self):
        """Whether the replacement is in place now."""
        return self._entered > 0

    @contextlib.contextmanager
    def active(self):
        """Puts the replacement in place for the block (nested and concurrent blocks are counted)."""
        with self._lock:
            if not self._entered:
                setattr(self.owner, self.name, self.replacement)
            self._entered += 1
        try:
            yield
        finally:
            with self._lock:
                self._entered -= 1
                if not self._entered:
                    if self.original is _MISSING:
                        delattr(self.owner, self.name)
                    else:
                        setattr(self.owner, self.name, self.original)


@contextlib.contextmanager
def all_active(patches):
    """Every ScopedPatch of `patches` active for the block."""
    with contextlib.ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch.active())
        yield
