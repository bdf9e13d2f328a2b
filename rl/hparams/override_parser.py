"""Safe parsing of `--hparam_override` text: it comes from a command line, so it is parsed, never
evaluated (`ast.parse(mode="eval")`, literal nodes only).

What a value *means* (is a bare word a string or a bool?) depends on its key's declared type, so
this module only reports bare words as `BareWord`; `rl.hparams.hparams` decides. The rules:
docs/hparams.md, "`--hparam_override`".
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

from rl import registry
from rl.errors import UserError

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_CLOSING = {"[": "]", "(": ")", "{": "}"}


class BareWord(str):
    """An unquoted identifier in override text (`adam`, `true`, `None`); the key's declared type
    decides whether it is a string, a bool or None."""


class LiteralError(ValueError):
    """The text is not a literal this parser accepts; the caller names key and type."""


def split_items(text: str) -> list[tuple[str, str]]:
    """Splits override text into `(key, value_text)` pairs; raises `UserError` if malformed."""
    items: dict[str, str] = {}
    for item in _split_top_level(text):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise UserError(f"malformed item {item.strip()!r} (expected key=value)")
        if not key:
            raise UserError(f"malformed item {item.strip()!r} (empty key)")
        if not _KEY.match(key):
            raise UserError(f"malformed key {key!r} in item {item.strip()!r}")
        if key in items:
            raise UserError(f"{key} is given twice")
        for other in items:  # `a={...}` and `a.b=1` would race
            if key.startswith(other + ".") or other.startswith(key + "."):
                raise UserError(f"{other} and {key} overlap; give one of them")
        items[key] = value
    return list(items.items())


def _split_top_level(text: str) -> list[str]:
    """Cuts `text` at commas that are outside brackets and quotes."""
    parts: list[str] = []
    start = 0
    stack: list[str] = []  # expected closing brackets
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1  # skip the escaped character
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in _CLOSING:
            stack.append(_CLOSING[ch])
        elif ch in ")]}":
            if not stack or stack.pop() != ch:
                raise UserError(f"unbalanced {ch!r} at position {i} in {text!r}")
        elif ch == "," and not stack:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if quote:
        raise UserError(f"unclosed quote {quote} in {text!r}")
    if stack:
        raise UserError(f"unclosed bracket (missing {stack[-1]!r}) in {text!r}")
    parts.append(text[start:])
    return parts


def parse_literal(text: str, allow_calls: bool = True) -> Any:
    """Parses one value: literals, `BareWord`s and (`allow_calls`) schedule calls; `LiteralError`
    for other text, `UserError` for an unknown schedule or bad arguments."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise LiteralError(text) from None
    return _literal(tree.body, top=allow_calls)


def _literal(node: ast.expr, top: bool = False) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool | int | float | str) or node.value is None:
            return node.value
        raise LiteralError(repr(node.value))  # bytes, complex, Ellipsis
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise LiteralError("unary sign on a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name):
        return BareWord(node.id)
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        keys = [_literal(k) for k in node.keys]  # `**x` has the key None: a LiteralError
        if not all(isinstance(k, str) for k in keys):
            raise LiteralError("dict keys must be strings")
        return dict(zip(keys, (_literal(v) for v in node.values), strict=True))
    if top and isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if any(kw.arg is None for kw in node.keywords):
            raise LiteralError("** in call")
        args = [_literal(a) for a in node.args]
        kwargs = {kw.arg: _literal(kw.value) for kw in node.keywords}
        return make_schedule(node.func.id, args, kwargs)
    raise LiteralError(type(node).__name__)


def make_schedule(name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Builds the schedule registered as `name`; unknown names list the registered ones."""
    factory = registry.schedules.get(name)  # UserError naming the registered ones
    signature = inspect.signature(factory)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as e:
        shown = ", ".join(
            p.name if p.default is p.empty else f"{p.name}={p.default!r}"
            for p in signature.parameters.values()
        )
        raise UserError(f"{name}({shown}): {e}") from None
    return factory(*args, **kwargs)


def override_text(values: dict[str, Any]) -> str:
    """`{"lr": 0.001, "clip_range": "linear(0.2, 0.0, 7800)"}` -> `lr=0.001,clip_range=linear(...)`
    (a string is override text already; numbers and bools print as literals)."""
    return ",".join(
        f"{key}={value}" if isinstance(value, bool | str) else f"{key}={value!r}"
        for key, value in values.items()
    )
