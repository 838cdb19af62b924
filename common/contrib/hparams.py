"""tf.contrib.training.HParams: named hyperparameters with fixed types, as TF1 programs passed them as params.

TF1 estimator programs built an HParams, passed it as `params` and read it
by attribute (`params.hidden_units`); tf.contrib's class left with
TensorFlow 2.0. This one keeps its behaviour: each hyperparameter's type
(and whether it is a list) is fixed when it is added, `set_hparam`,
`parse("a=1,b=[2,3]")`, `override_from_dict` and `parse_json` convert to it
(an int widens to a float, nothing narrows), and unknown names are refused.
"""

import json
import re

_ASSIGNMENT = re.compile(r"\s*(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>\[[^\]]*\]|[^,\[]*)\s*(,|$)")


def _cast(name, kind, value):
    """value as the hyperparameter's type, or a ValueError naming it."""
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind is bool and isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
        return value.lower() in ("true", "1")
    if isinstance(value, str) and kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    raise ValueError(f"Could not cast hparam '{name}' of type '{kind.__name__}' from value {value!r}")


class HParams:
    """tf.contrib.training.HParams (see the module)."""

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise ValueError("HParams: hparam_def (an HParamDef protocol buffer) is not supported; pass the "
                             "hyperparameters as keyword arguments")
        self._hparam_types = {}
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Adds `name` with `value`, fixing its type (a list's: its first element's)."""
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        """Sets an existing hyperparameter, converting value to its type."""
        if name not in self._hparam_types:
            raise KeyError(f"HParams has no hyperparameter {name!r} (it has {', '.join(sorted(self._hparam_types))})")
        kind, is_list = self._hparam_types[name]
        if isinstance(value, (list, tuple)):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, kind, v) for v in value])
        elif is_list:
            raise ValueError(f"Must pass a list for multi-valued parameter: {name}")
        else:
            setattr(self, name, value if value is None else _cast(name, kind, value))

    def del_hparam(self, name):
        if name in self._hparam_types:
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Overrides hyperparameters from "name=value,name=[v1,v2]"; returns self."""
        position, text = 0, values.strip()
        parsed = {}
        while position < len(text):
            match = _ASSIGNMENT.match(text, position)
            if match is None or match.end() == position:
                raise ValueError(f"Could not parse hparam at position {position} of {values!r}")
            name, raw = match.group("name"), match.group("value").strip()
            if name not in self._hparam_types:
                raise ValueError(f"Unknown hyperparameter type for {name}")
            if name in parsed:
                raise ValueError(f"Duplicate hyperparameter {name} in {values!r}")
            parsed[name] = [v.strip() for v in raw[1:-1].split(",") if v.strip()] if raw.startswith("[") else raw
            position = match.end()
        return self.override_from_dict(parsed)

    def override_from_dict(self, values_dict):
        """Sets each name of values_dict (all must exist); returns self."""
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_from_map(self, values_map):
        return self.override_from_dict(values_map)

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        """A dict of every hyperparameter's name and value."""
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        """The value of key, or default (which, when not None, must be of key's type)."""
        if key not in self._hparam_types:
            return default
        if default is not None:
            kind, is_list = self._hparam_types[key]
            if is_list != isinstance(default, (list, tuple)):
                raise ValueError(f"Hparam '{key}' is {'a list' if is_list else 'a single value'}; the default "
                                 f"{default!r} is not")
            for item in default if is_list else [default]:
                _cast(key, kind, item)
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"{type(self).__name__}({self})"
