"""Tests for the safe `--hparam_override` splitter and literal parser."""

import pytest

from rl.errors import UserError
from rl.hparams import Schedule
from rl.hparams.override_parser import BareWord, LiteralError, parse_literal, split_items


def test_split_on_top_level_commas_only():
    text = "a=1,b=[1, 2],c=(3,4),d={'x': 1, 'y': 2},e='p,q',f=\"r,s\",g=linear(1.0,0.05,10)"
    assert split_items(text) == [
        ("a", "1"),
        ("b", "[1, 2]"),
        ("c", "(3,4)"),
        ("d", "{'x': 1, 'y': 2}"),
        ("e", "'p,q'"),
        ("f", '"r,s"'),
        ("g", "linear(1.0,0.05,10)"),
    ]


def test_split_strips_spaces_and_splits_at_first_equals():
    assert split_items(" lr = 3e-4 , name=a=b ") == [("lr", "3e-4"), ("name", "a=b")]


def test_split_keeps_escaped_quote_inside_string():
    assert split_items(r"s='it\'s, ok',t=1") == [("s", r"'it\'s, ok'"), ("t", "1")]


def test_empty_text_and_empty_items_are_ignored():
    assert split_items("") == []
    assert split_items("   ") == []
    assert split_items("a=1,") == [("a", "1")]  # trailing comma
    assert split_items(",a=1,,b=2") == [("a", "1"), ("b", "2")]


def test_dotted_keys():
    assert split_items("eval.episodes=5") == [("eval.episodes", "5")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lr", "malformed item 'lr' (expected key=value)"),
        ("lr=1,gamma", "malformed item 'gamma' (expected key=value)"),
        ("=3", "malformed item '=3' (empty key)"),
        ("a b=3", "malformed key 'a b'"),
        ("a..b=3", "malformed key 'a..b'"),
        ("x=[1,2", "unclosed bracket (missing ']')"),
        ("x={'a': 1", "unclosed bracket (missing '}')"),
        ("x=[1,2)", "unbalanced ')'"),
        ("x=1]", "unbalanced ']'"),
        ("x='abc", "unclosed quote '"),
        ("lr=1,lr=2", "lr is given twice"),
        ("kw={},kw.a=1", "kw and kw.a overlap"),
    ],
)
def test_malformed_text_is_a_user_error(text, message):
    with pytest.raises(UserError) as e:
        split_items(text)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_literals():
    assert parse_literal("3") == 3 and type(parse_literal("3")) is int
    assert parse_literal("1e4") == 10000.0 and type(parse_literal("1e4")) is float
    assert parse_literal("-3e-4") == -3e-4
    assert parse_literal("+2") == 2
    assert parse_literal("10_000") == 10000
    assert parse_literal("'adam'") == "adam"
    assert parse_literal("[1, -2.5, 'x']") == [1, -2.5, "x"]
    assert parse_literal("(84, 84)") == (84, 84)
    assert parse_literal("{'a': [1, {'b': None}]}") == {"a": [1, {"b": None}]}
    assert parse_literal("True") is True


def test_bare_words_are_marked():
    word = parse_literal("adam")
    assert isinstance(word, BareWord) and word == "adam"
    assert isinstance(parse_literal("[a, b]")[1], BareWord)
    assert list(parse_literal("{max_steps: 3}")) == ["max_steps"]


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",  # a call of a non-schedule
        "os.system",  # attribute
        "x[0]",  # subscript
        "1 + 2",  # operators
        "-'a'",  # sign on a string
        "-True",  # sign on a bool
        "1j",  # complex
        "b'x'",  # bytes
        "{1: 2}",  # non-string dict key
        "{**a}",
        "[linear(1.0, 0.0, 10)]",  # schedules only at the top level
        "lambda: 0",
        "[1,",
    ],
)
def test_non_literals_are_rejected(text):
    with pytest.raises((LiteralError, UserError)):
        parse_literal(text)


def test_schedule_call_builds_a_registered_schedule():
    value = parse_literal("linear(1.0, 0.05, 10000, begin=5)")
    assert isinstance(value, Schedule)
    assert value.spec() == "linear(1.0, 0.05, 10000, begin=5)"


def test_calls_can_be_disallowed():
    with pytest.raises(LiteralError):
        parse_literal("linear(1.0, 0.05, 10)", allow_calls=False)


def test_unknown_schedule_lists_registered_ones():
    with pytest.raises(UserError) as e:
        parse_literal("lineer(1, 0, 10)")
    message = str(e.value)
    assert "unknown schedule 'lineer' (did you mean 'linear'?)" in message
    assert "registered: constant, cosine, exponential, linear, piecewise" in message


def test_wrong_schedule_arity_shows_the_signature():
    with pytest.raises(UserError, match=r"linear\(start, end, steps, begin=0\): missing"):
        parse_literal("linear(1.0, 0.05)")
    with pytest.raises(UserError, match=r"constant\(value\): .*unexpected keyword"):
        parse_literal("constant(1.0, foo=2)")
