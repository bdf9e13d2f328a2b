"""`HParams`: typed, documented, freezable hyper-parameters.

Every key is declared once with `add(name, default, doc)`, and every later assignment (a set's
factory, `--hparam_override`, `hparams.json`) is checked against its type. Strict, as in
tensor2tensor: no float->int, no str<->bool, bool is not an int; int->float widens. A typo in a
key fails with a suggestion. How override text is read: docs/hparams.md, "`--hparam_override`".
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from rl import registry
from rl.errors import UserError, did_you_mean
from rl.hparams.override_parser import BareWord, LiteralError, parse_literal, split_items
from rl.hparams.schedules import Schedule, as_schedule

_JSON_FORMAT = "rl.hparams/1"
_SCALARS = ("int", "float", "bool", "str")
_NONE_WORDS = ("None", "none", "null")
# The value of an `auto[X]` key that leaves the choice to the code reading it.
AUTO = "auto"
_BOOL_WORDS = {"true": True, "True": True, "false": False, "False": False}


class _Mismatch(Exception):
    """A value does not fit a TypeSpec; the caller words the message."""


@dataclasses.dataclass(frozen=True)
class TypeSpec:
    """A declared hparam type; `str(spec)` is its stable name ("list[int]", "optional[float]")."""

    kind: str  # int float bool str list tuple dict schedule hparams optional auto
    elem: TypeSpec | None = None

    def __str__(self) -> str:
        return f"{self.kind}[{self.elem}]" if self.elem else self.kind

    @staticmethod
    def parse(name: str) -> TypeSpec:
        """Inverse of `str(spec)`."""
        name = name.strip()
        if name.endswith("]") and "[" in name:
            kind, _, inner = name[:-1].partition("[")
            return TypeSpec(kind, TypeSpec.parse(inner))
        return TypeSpec(name)

    @staticmethod
    def of(tp: Any) -> TypeSpec:
        """From a Python type (`list[int]`, `X | None`, `Schedule`, ...) or a type name."""
        if isinstance(tp, TypeSpec):
            return tp
        if isinstance(tp, str):
            return TypeSpec.parse(tp)
        simple = {int: "int", float: "float", bool: "bool", str: "str", dict: "dict"}
        if tp in simple:
            return TypeSpec(simple[tp])
        if isinstance(tp, type) and issubclass(tp, Schedule):
            return TypeSpec("schedule")
        if isinstance(tp, type) and issubclass(tp, HParams):
            return TypeSpec("hparams")
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is dict:
            return TypeSpec("dict")
        if origin in (list, tuple) and args:
            elems = {a for a in args if a is not Ellipsis}
            if len(elems) == 1:
                return TypeSpec(origin.__name__, TypeSpec.of(elems.pop()))
        if origin in (typing.Union, types.UnionType) and type(None) in args and len(args) == 2:
            (inner,) = (a for a in args if a is not type(None))
            return TypeSpec("optional", TypeSpec.of(inner))
        raise ValueError(f"unsupported hparam type {tp!r}")

    @staticmethod
    def infer(default: Any) -> TypeSpec:
        """The type of a default value; None and empty lists need an explicit type."""
        kinds = (bool, numbers.Integral, numbers.Real, str, Schedule, HParams, dict)
        names = ("bool", "int", "float", "str", "schedule", "hparams", "dict")
        for kind, name in zip(kinds, names, strict=True):  # bool before int, as it is one
            if isinstance(default, kind):
                return TypeSpec(name)
        if isinstance(default, list | tuple) and default:
            kinds = {str(TypeSpec.infer(v)) for v in default}
            if kinds == {"int", "float"}:
                kinds = {"float"}
            if len(kinds) == 1 and (kind := kinds.pop()) in _SCALARS:
                return TypeSpec(type(default).__name__, TypeSpec(kind))
        raise ValueError(f"cannot infer an hparam type from {default!r}; pass type=")

    def __post_init__(self) -> None:
        elem = self.elem.kind if self.elem else None
        ok = (
            (self.kind in (*_SCALARS, "dict", "schedule", "hparams") and elem is None)
            or (self.kind in ("list", "tuple") and elem in _SCALARS)
            or (self.kind == "optional" and elem not in (None, "optional", "hparams"))
            or (self.kind == "auto" and elem in ("bool", "int", "float"))
        )
        if not ok:
            raise ValueError(f"unsupported hparam type {str(self)!r}")

    def check(self, value: Any) -> Any:
        """Returns `value` in canonical form (int->float, tuple->list, ...) or raises _Mismatch."""
        kind = self.kind
        if kind == "optional":
            return None if value is None else self.elem.check(value)
        if kind == "auto":
            return AUTO if isinstance(value, str) and value == AUTO else self.elem.check(value)
        if kind == "bool" and isinstance(value, bool):
            return value
        if isinstance(value, bool):
            raise _Mismatch  # bool is not an int, float or str
        if kind == "int" and isinstance(value, numbers.Integral):
            return int(value)
        if kind == "float" and isinstance(value, numbers.Real):
            return float(value)
        if kind == "str" and isinstance(value, str):
            return str(value)
        if kind in ("list", "tuple") and isinstance(value, list | tuple):
            items = [self.elem.check(v) for v in value]
            return items if kind == "list" else tuple(items)
        if kind == "dict" and isinstance(value, dict):
            return _json_literal(value)
        if kind == "schedule" and isinstance(value, Schedule | numbers.Real | str):
            return as_schedule(value)  # a bad schedule string raises its own UserError
        if kind == "hparams" and isinstance(value, HParams):
            return value.copy()
        raise _Mismatch

    def from_text(self, text: str) -> Any:
        """Reads override text under the bare-word rule of docs/hparams.md."""
        kind, elem = self.kind, self.elem
        if kind == "optional":
            return None if text in _NONE_WORDS else elem.from_text(text)
        if kind == "auto":
            return AUTO if text.strip("'\"") == AUTO else elem.from_text(text)
        if kind == "str" and text[:1] not in ("'", '"'):
            return text
        if kind == "hparams":
            raise _Mismatch
        try:
            value = parse_literal(text, allow_calls=kind == "schedule")
        except LiteralError:
            raise _Mismatch from None
        if isinstance(value, BareWord):  # str keys never get here (they take unquoted text)
            value = _bare_word(value, kind)
        if kind == "dict":
            value = _bare_words_in_json(value)
        if kind in ("list", "tuple") and isinstance(value, list | tuple):
            value = [_bare_word(v, elem.kind) for v in value]
        return self.check(value)

    def to_json(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind == "optional" or (self.kind == "auto" and value != AUTO):
            return self.elem.to_json(value)
        if self.kind == "schedule":
            return value.spec()
        if self.kind == "tuple":
            return list(value)
        if self.kind == "hparams":
            return value.to_dict()
        return value


# Why a number key refuses a schedule, unless its declaration gives its own `fixed_because`.
_SCHEDULE_CALL = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")
_READ_WHEN_BUILT = "is read once, when the agent is built"
_NO_SCHEDULE = (
    "{key} {reason}, so it takes a number, not the schedule {value!r}; the keys that follow a "
    "schedule say so in docs/hparams_reference.md"
)


def _type_error(key: str, entry: _Entry, given: Any, schedule: str | None) -> UserError:
    """`given` does not fit the key; a schedule given to a number key says why it may not."""
    spec = entry.spec
    kind = spec.elem.kind if spec.kind == "optional" else spec.kind
    if schedule is not None and kind in ("float", "int"):
        return UserError(_NO_SCHEDULE.format(key=key, reason=entry.fixed_because, value=schedule))
    return UserError(f"{key} expects {spec}, got {given!r}")


def _bare_word(value: Any, kind: str) -> Any:
    """`value` as a `kind`: a bare word is a string for str, a bool word for bool."""
    if not isinstance(value, BareWord) or kind == "str":
        return value
    if kind == "bool" and value in _BOOL_WORDS:
        return _BOOL_WORDS[value]
    raise _Mismatch


def _json_literal(value: Any) -> Any:
    """A deep copy of a JSON-literal value (str dict keys); raises _Mismatch otherwise."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_json_literal(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {str(k): _json_literal(v) for k, v in value.items()}
    raise _Mismatch


def _bare_words_in_json(value: Any) -> Any:
    if isinstance(value, BareWord):
        return _BOOL_WORDS.get(value, None if value in _NONE_WORDS else str(value))
    if isinstance(value, list | tuple):
        return [_bare_words_in_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _bare_words_in_json(v) for k, v in value.items()}
    return value


@dataclasses.dataclass
class _Entry:
    spec: TypeSpec
    value: Any
    doc: str
    fixed_because: str = _READ_WHEN_BUILT  # a number key's reason to refuse a schedule


class HParams:
    """Declared, typed hyper-parameters with attribute access (`hp.lr`, `hp.eval.episodes`), frozen
    by the trainer after overrides; runtime state never lives here."""

    def __init__(self) -> None:
        object.__setattr__(self, "_entries", {})
        object.__setattr__(self, "_frozen", False)

    def add(
        self,
        name: str,
        default: Any,
        doc: str,
        type: Any = None,
        fixed_because: str = _READ_WHEN_BUILT,
    ) -> HParams:
        """Declares `name` once; `fixed_because` completes "{name} ..." in the error for a number
        key given a schedule."""
        self._check_not_frozen()
        if not name.isidentifier() or name.startswith("_") or hasattr(HParams, name):
            raise ValueError(f"invalid hparam name {name!r} (identifier, no _, no method name)")
        if name in self._entries:
            raise ValueError(f"hparam {name!r} is declared twice")
        spec = TypeSpec.infer(default) if type is None else TypeSpec.of(type)
        if spec.kind == "hparams" and isinstance(default, HParams):
            value = default  # keep the group itself so `hp.eval.add(...)` works after adding
        else:
            try:
                value = spec.check(default)
            except _Mismatch:
                raise ValueError(f"default of {name} must be {spec}, got {default!r}") from None
        self._entries[name] = _Entry(spec, value, doc, fixed_because)
        return self

    def set(self, name: str, value: Any) -> None:
        """Sets a declared key (dotted names reach into nested groups), checking its type."""
        owner, entry, _ = self._walk(name)
        owner._check_not_frozen()
        if entry.spec.kind == "hparams":
            raise UserError(f"{name} is a group of hparams; set {name}.<name> instead")
        try:
            entry.value = entry.spec.check(value)
        except _Mismatch:
            schedule = value.spec() if isinstance(value, Schedule) else None
            raise _type_error(name, entry, value, schedule) from None
        except UserError as e:  # e.g. a schedule string naming an unknown schedule
            raise UserError(f"{name}: {e}") from None

    def update(self, **values: Any) -> HParams:
        """`set` for each keyword, in order; returns self (`return hp.update(lr=1e-3)`)."""
        for name, value in values.items():
            self.set(name, value)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        self.set(name, value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        entries = self.__dict__["_entries"]
        if name not in entries:
            # A programming error in code reading hparams: AttributeError, with a hint.
            raise AttributeError(f"unknown hparam {name!r}{did_you_mean(name, entries)}")
        return entries[name].value

    def override(self, text: str) -> HParams:
        """Applies `--hparam_override` text, all or nothing; errors are one-line UserErrors."""
        self._check_not_frozen()
        try:
            updates = [self._parse_item(key, text) for key, text in split_items(text)]
        except UserError as e:
            raise UserError(f"--hparam_override: {e}") from None
        for apply in updates:
            apply()
        return self

    def _parse_item(self, key: str, text: str) -> Callable[[], None]:
        """Checks one `key=value` item; returns a closure that applies it."""
        owner, entry, rest = self._walk(key, into_dicts=True)
        owner._check_not_frozen()
        if rest:  # `env_kwargs.max_episode_steps=200`: one entry of a dict-typed key
            return self._parse_dict_entry(key, text, entry.value, rest)
        if entry.spec.kind == "hparams":
            raise UserError(f"{key} is a group of hparams; set {key}.<name> instead")
        try:
            value = entry.spec.from_text(text)
        except _Mismatch:  # text that calls a registered schedule is refused as a schedule
            call = _SCHEDULE_CALL.match(text)
            schedule = text if call and call.group(1) in registry.schedules else None
            raise _type_error(key, entry, text, schedule) from None
        except UserError as e:
            raise UserError(f"{key}: {e}") from None
        return lambda: setattr(entry, "value", value)

    @staticmethod
    def _parse_dict_entry(
        key: str, text: str, target: dict[str, Any], path: list[str]
    ) -> Callable[[], None]:
        try:
            value = _bare_words_in_json(parse_literal(text, allow_calls=False))
            _json_literal(value)
        except (LiteralError, _Mismatch, UserError):
            raise UserError(f"{key} expects a JSON literal, got {text!r}") from None
        for part in path[:-1]:
            if not isinstance(target.get(part), dict):
                raise UserError(f"{key}: no dict entry {part!r} to set {path[-1]!r} in")
            target = target[part]
        return lambda: target.__setitem__(path[-1], value)

    def _walk(self, name: str, into_dicts: bool = False) -> tuple[HParams, _Entry, list[str]]:
        """Follows a dotted name through nested groups: (owning group, entry, rest); with
        `into_dicts` it stops at a dict-typed key and `rest` is the path inside it."""
        owner, parts = self, name.split(".")
        for i, part in enumerate(parts):
            if part not in owner._entries:
                scope = f" in group {'.'.join(parts[:i])!r}" if i else ""
                raise UserError(
                    f"unknown hparam {part!r}{scope}{did_you_mean(part, owner._entries)}"
                )
            entry = owner._entries[part]
            rest = parts[i + 1 :]
            if not rest or (into_dicts and entry.spec.kind == "dict"):
                return owner, entry, rest
            if entry.spec.kind != "hparams":
                raise UserError(f"{'.'.join(parts[: i + 1])} is {entry.spec}, not a group")
            owner = entry.value
        raise AssertionError("unreachable")

    def freeze(self) -> HParams:
        """Makes this object and its nested groups read-only (setting raises AttributeError)."""
        object.__setattr__(self, "_frozen", True)
        for entry in self._entries.values():
            if entry.spec.kind == "hparams":
                entry.value.freeze()
        return self

    @property
    def frozen(self) -> bool:
        return self._frozen

    def _check_not_frozen(self) -> None:
        if self._frozen:
            raise AttributeError("these hparams are frozen; change a copy() instead")

    def copy(self) -> HParams:
        """A deep, unfrozen copy."""
        new = HParams()
        for name, e in self._entries.items():  # check() copies groups, lists and dicts
            new._entries[name] = dataclasses.replace(e, value=e.spec.check(e.value))
        return new

    def keys(self) -> list[str]:
        return list(self._entries)

    def items(self) -> list[tuple[str, Any]]:
        return [(name, e.value) for name, e in self._entries.items()]

    def __contains__(self, name: object) -> bool:
        try:
            self._walk(str(name))
        except UserError:
            return False
        return True

    def doc(self, name: str) -> str:
        return self._walk(name)[1].doc

    def type_name(self, name: str) -> str:
        return str(self._walk(name)[1].spec)

    def to_dict(self) -> dict[str, Any]:
        """Values as plain JSON-able data: schedules as spec strings, groups as dicts."""
        return {name: e.spec.to_json(e.value) for name, e in self._entries.items()}

    def flat(self) -> dict[str, Any]:
        """`{"eval.episodes": 5, "lr": "linear(...)", ...}`: every key as JSON data; the one flat
        view that diffs, inheritance, manifests and TensorBoard read."""
        out: dict[str, Any] = {}
        for name, e in self._entries.items():
            if e.spec.kind == "hparams":
                out.update({f"{name}.{k}": v for k, v in e.value.flat().items()})
            else:
                out[name] = e.spec.to_json(e.value)
        return out

    def flat_scalars(self) -> dict[str, bool | int | float | str]:
        """`flat()` with lists, dicts and None as text: TensorBoard takes scalars only."""

        def scalar(value: Any) -> bool | int | float | str:
            if value is None:
                return "None"
            return value if isinstance(value, bool | int | float | str) else json.dumps(value)

        return {key: scalar(value) for key, value in self.flat().items()}

    def diff(self, other: HParams) -> list[str]:
        """Lines `key: old -> new` from `self` (old) to `other` (new); empty when equal."""
        mine, theirs = self._flat_typed(), other._flat_typed()  # key -> (type, value as JSON)
        absent = ("", "(absent)")
        lines = []
        for key in dict.fromkeys([*mine, *theirs]):
            (old_type, old), (new_type, new) = mine.get(key, absent), theirs.get(key, absent)
            if old_type and new_type and old_type != new_type:
                old, new = f"{old_type} {old}", f"{new_type} {new}"
            if old != new:
                lines.append(f"{key}: {old} -> {new}")
        return lines

    def differing_keys(self, other: HParams) -> list[str]:
        """The dotted keys whose values differ between `self` and `other` (the keys of `diff`)."""
        return [line.split(": ", 1)[0] for line in self.diff(other)]

    def constant_number(self, name: str) -> float | None:
        """A float key's value or a constant schedule's; None for anything else."""
        value = self._walk(name)[1].value
        if isinstance(value, Schedule):
            return float(value.args["value"]) if value.name == "constant" else None
        return value if isinstance(value, float) else None

    def _flat_typed(self) -> dict[str, tuple[str, str]]:
        return {key: (self.type_name(key), json.dumps(v)) for key, v in self.flat().items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HParams):
            return NotImplemented
        mine, theirs = self._entries, other._entries
        return mine.keys() == theirs.keys() and all(
            mine[k].spec == theirs[k].spec and mine[k].value == theirs[k].value for k in mine
        )

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={e.value!r}" for name, e in self._entries.items())
        return f"HParams({inner})"

    def to_json(self) -> str:
        """A self-describing document (values, types, docs) that `from_json` rebuilds."""
        return json.dumps({"format": _JSON_FORMAT, "hparams": self._describe()}, indent=2)

    def _describe(self) -> dict[str, Any]:
        out = {}
        for name, e in self._entries.items():
            value = e.value._describe() if e.spec.kind == "hparams" else e.spec.to_json(e.value)
            out[name] = {"type": str(e.spec), "value": value, "doc": e.doc}
        return out

    @classmethod
    def from_json(cls, text: str) -> HParams:
        """Rebuilds the object written by `to_json`, without the registry."""
        try:
            data = json.loads(text)
            if data.get("format") != _JSON_FORMAT:
                raise ValueError(f"format is {data.get('format')!r}, expected {_JSON_FORMAT!r}")
            return cls._rebuild(data["hparams"])
        except (ValueError, KeyError, TypeError, AttributeError, UserError) as e:
            raise UserError(f"hparams JSON is not readable: {type(e).__name__}: {e}") from None

    @classmethod
    def _rebuild(cls, described: dict[str, Any]) -> HParams:
        hp = cls()
        for name, d in described.items():
            spec = TypeSpec.parse(d["type"])
            if spec.kind == "hparams":
                value = cls._rebuild(d["value"])
            else:
                try:
                    value = spec.check(d["value"])  # a schedule's spec string is parsed
                except _Mismatch:
                    raise ValueError(f"{name}: {d['value']!r} is not {spec}") from None
            hp.add(name, value, d["doc"], type=spec)
        return hp
