"""HParams: declaration, strict types, overrides, freezing, JSON, diff, reference."""

import json
from typing import Optional

import pytest

from rl import registry
from rl.errors import UserError
from rl.hparams import HParams, Schedule, TypeSpec
from rl.hparams.reference import reference_markdown
from rl.hparams.schedules import Constant, Linear


def base() -> HParams:
    """A small set in the shape the registered sets have (a parent factory)."""
    hp = HParams()
    hp.add("lr", 1e-3, "Adam learning rate.")
    hp.add("gamma", 0.99, "Discount factor.")
    hp.add("batch_size", 32, "Transitions per update.")
    hp.add("double_q", True, "Use Double DQN targets.")
    hp.add("name", "dqn", "Run label.")
    hp.add("opt", "adam", "Optimizer name.")
    hp.add("hidden_sizes", [64, 64], "MLP layer widths.")
    hp.add("frame_shape", (84, 84), "Observation frame size.")
    hp.add("env_kwargs", {}, "Extra gymnasium.make kwargs.")
    hp.add("epsilon", Linear(1.0, 0.05, 10000), "Exploration rate schedule.")
    hp.add("max_grad_norm", None, "Gradient clipping; None = off.", type=float | None)
    evaluation = HParams()
    evaluation.add("episodes", 10, "Episodes per evaluation.")
    evaluation.add("every_steps", 10000, "Env steps between evaluations.")
    evaluation.add("greedy", True, "Act greedily during evaluation.")
    hp.add("eval", evaluation, "Evaluation protocol.")
    return hp


def child() -> HParams:
    hp = base()
    hp.lr = 3e-4
    hp.eval.episodes = 5
    hp.add("n_step", 3, "Multi-step return length.")
    return hp


# --- declaration and inference ---


def test_types_are_inferred_from_defaults():
    hp = base()
    expected = {
        "lr": "float",
        "gamma": "float",
        "batch_size": "int",
        "double_q": "bool",
        "name": "str",
        "hidden_sizes": "list[int]",
        "frame_shape": "tuple[int]",
        "env_kwargs": "dict",
        "epsilon": "schedule",
        "max_grad_norm": "optional[float]",
        "eval": "hparams",
        "eval.episodes": "int",
    }
    assert {k: hp.type_name(k) for k in expected} == expected


def test_list_inference():
    hp = HParams()
    hp.add("mixed", [1, 2.5], "ints and floats widen to float")
    hp.add("names", ["a", "b"], "strings")
    hp.add("flags", [True], "bools")
    assert hp.type_name("mixed") == "list[float]" and hp.mixed == [1.0, 2.5]
    assert hp.type_name("names") == "list[str]"
    assert hp.type_name("flags") == "list[bool]"
    with pytest.raises(ValueError, match="pass type="):
        hp.add("empty", [], "empty list needs a type")
    with pytest.raises(ValueError, match="pass type="):
        hp.add("odd", [1, "a"], "mixed kinds")
    with pytest.raises(ValueError, match="pass type="):
        hp.add("nothing", None, "None needs a type")
    hp.add("empty", [], "explicit", type=list[str])
    assert hp.empty == [] and hp.type_name("empty") == "list[str]"


@pytest.mark.parametrize(
    ("tp", "name"),
    [
        (int, "int"),
        (float, "float"),
        (bool, "bool"),
        (str, "str"),
        (dict, "dict"),
        (dict[str, int], "dict"),
        (list[float], "list[float]"),
        (tuple[int, ...], "tuple[int]"),
        (Optional[int], "optional[int]"),  # noqa: UP045 (typing.Optional is supported too)
        (str | None, "optional[str]"),
        (list[int] | None, "optional[list[int]]"),
        (Schedule, "schedule"),
        (HParams, "hparams"),
        ("optional[schedule]", "optional[schedule]"),
    ],
)
def test_explicit_types(tp, name):
    spec = TypeSpec.of(tp)
    assert str(spec) == name
    assert TypeSpec.parse(name) == spec


@pytest.mark.parametrize("tp", [list, set, bytes, list[list[int]], "optional[hparams]", "int[x]"])
def test_unsupported_types(tp):
    with pytest.raises(ValueError, match="unsupported hparam type"):
        TypeSpec.of(tp)


def test_declaring_twice_is_a_value_error():
    hp = base()
    with pytest.raises(ValueError, match="'lr' is declared twice"):
        hp.add("lr", 1e-4, "again")


@pytest.mark.parametrize("name", ["keys", "override", "_private", "2x", "a.b"])
def test_invalid_names(name):
    with pytest.raises(ValueError, match="invalid hparam name"):
        HParams().add(name, 1, "doc")


def test_default_must_fit_explicit_type():
    with pytest.raises(ValueError, match="default of n must be int, got 1.5"):
        HParams().add("n", 1.5, "doc", type=int)


def test_docs_keys_items():
    hp = base()
    assert hp.doc("gamma") == "Discount factor."
    assert hp.doc("eval.greedy") == "Act greedily during evaluation."
    assert hp.keys()[:3] == ["lr", "gamma", "batch_size"]  # declaration order
    assert dict(hp.items())["batch_size"] == 32
    assert "eval.episodes" in hp and "eval.nope" not in hp and "gama" not in hp


def test_child_set_changes_values_and_adds_keys():
    hp = child()
    assert hp.lr == 3e-4 and hp.eval.episodes == 5 and hp.n_step == 3
    assert base().lr == 1e-3  # factories return fresh objects
    assert base().eval.episodes == 10


# --- strict types on set ---


def test_set_and_attribute_assignment_are_type_checked():
    hp = base()
    hp.set("batch_size", 64)
    hp.lr = 1  # int -> float widens
    assert hp.batch_size == 64 and hp.lr == 1.0 and type(hp.lr) is float
    with pytest.raises(UserError, match=r"^batch_size expects int, got 1.5$"):
        hp.batch_size = 1.5
    with pytest.raises(UserError, match=r"^batch_size expects int, got 10000.0$"):
        hp.batch_size = 1e4
    with pytest.raises(UserError, match=r"^batch_size expects int, got True$"):
        hp.batch_size = True  # bool is not an int
    with pytest.raises(UserError, match=r"^lr expects float, got False$"):
        hp.lr = False
    with pytest.raises(UserError, match=r"^double_q expects bool, got 'true'$"):
        hp.double_q = "true"  # no str -> bool
    with pytest.raises(UserError, match=r"^double_q expects bool, got 1$"):
        hp.double_q = 1
    with pytest.raises(UserError, match=r"^name expects str, got True$"):
        hp.name = True  # no bool -> str
    with pytest.raises(UserError, match=r"^hidden_sizes expects list\[int\], got \[64, 1.5\]$"):
        hp.hidden_sizes = [64, 1.5]
    assert hp.batch_size == 64  # failed sets change nothing


def test_update_sets_each_key_type_checked_and_returns_the_object():
    hp = base()
    assert hp.update(lr=1, batch_size=64) is hp
    assert hp.lr == 1.0 and type(hp.lr) is float and hp.batch_size == 64
    assert hp.eval.update(episodes=3).episodes == 3
    with pytest.raises(UserError, match=r"^batch_size expects int, got 1.5$"):
        hp.update(gamma=0.5, batch_size=1.5)
    assert hp.gamma == 0.5 and hp.batch_size == 64  # in order, as `set` one key at a time


def test_unknown_key_suggests_close_name():
    hp = base()
    with pytest.raises(UserError, match=r"^unknown hparam 'gama' \(did you mean 'gamma'\?\)$"):
        hp.gama = 0.9
    with pytest.raises(UserError, match=r"unknown hparam 'episode' in group 'eval' \(did you"):
        hp.set("eval.episode", 3)
    with pytest.raises(AttributeError, match=r"unknown hparam 'gama' \(did you mean 'gamma'\?\)"):
        _ = hp.gama  # reading an unknown key is a programming error
    assert not hasattr(hp, "gama")


def test_lists_tuples_dicts_optional_schedule_on_set():
    hp = base()
    hp.hidden_sizes = (128, 128)
    assert hp.hidden_sizes == [128, 128]
    hp.frame_shape = [42, 42]
    assert hp.frame_shape == (42, 42)
    hp.env_kwargs = {"max_episode_steps": 200, "opts": [1, None]}
    assert hp.env_kwargs == {"max_episode_steps": 200, "opts": [1, None]}
    with pytest.raises(UserError, match="env_kwargs expects dict"):
        hp.env_kwargs = {1: 2}
    with pytest.raises(UserError, match="env_kwargs expects dict"):
        hp.env_kwargs = {"f": print}
    hp.max_grad_norm = 10  # optional[float] widens too
    assert hp.max_grad_norm == 10.0
    hp.max_grad_norm = None
    assert hp.max_grad_norm is None
    hp.epsilon = 0.1
    assert hp.epsilon == Constant(0.1)
    hp.epsilon = "linear(1.0, 0.1, 100)"
    assert hp.epsilon == Linear(1.0, 0.1, 100)
    with pytest.raises(UserError, match="^epsilon: unknown schedule 'lineer'"):
        hp.epsilon = "lineer(1.0, 0.1, 100)"
    with pytest.raises(UserError, match="^eval is a group of hparams"):
        hp.eval = HParams()


def test_stored_values_are_copies():
    sizes = [64, 64]
    hp = HParams().add("hidden_sizes", sizes, "doc")
    sizes.append(1)
    assert hp.hidden_sizes == [64, 64]


# --- overrides ---

FULL = (
    "lr=3e-4,hidden_sizes=[128,128],epsilon=linear(1.0,0.05,10000),eval.episodes=5,"
    "env_kwargs={'max_episode_steps': 200},double_q=false,name=foo,opt='sgd'"
)


def test_override_example_from_the_design():
    hp = base().override(FULL)
    assert hp.lr == 3e-4
    assert hp.hidden_sizes == [128, 128]
    assert hp.epsilon == Linear(1.0, 0.05, 10000)
    assert hp.eval.episodes == 5
    assert hp.env_kwargs == {"max_episode_steps": 200}
    assert hp.double_q is False
    assert hp.name == "foo" and hp.opt == "sgd"
    assert hp.batch_size == 32  # untouched


def test_empty_override_is_a_no_op():
    hp = base()
    assert hp.override("") == base()
    assert hp.override("  ,") == base()


def test_override_widening_and_numbers():
    hp = base().override("lr=1,batch_size=10_000,gamma=-0.5")
    assert hp.lr == 1.0 and type(hp.lr) is float
    assert hp.batch_size == 10000
    assert hp.gamma == -0.5


def test_bare_word_rule_for_str_keys():
    hp = base().override("name=true,opt=CartPole-v1")
    assert hp.name == "true"  # unquoted text is taken verbatim for str keys
    assert hp.opt == "CartPole-v1"
    hp.override("name='a b',opt=\"x,y\"")  # quoted: a Python string literal
    assert hp.name == "a b" and hp.opt == "x,y"
    hp.override("name=")
    assert hp.name == ""


def test_bools_only_from_bool_words():
    hp = base()
    for text, value in [("true", True), ("False", False), ("True", True), ("false", False)]:
        assert hp.override(f"double_q={text}").double_q is value
    for text in ["maybe", "1", "0", "'true'", "yes"]:
        with pytest.raises(UserError) as e:
            hp.override(f"double_q={text}")
        assert str(e.value) == f"--hparam_override: double_q expects bool, got {text!r}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("batch_size=1.5", "batch_size expects int, got '1.5'"),
        ("batch_size=1e4", "batch_size expects int, got '1e4'"),
        ("batch_size=true", "batch_size expects int, got 'true'"),
        ("lr=true", "lr expects float, got 'true'"),
        ("lr=fast", "lr expects float, got 'fast'"),
        (  # a number-typed key is read when the agent is built: it says so
            "lr=linear(1.0,0.1,10)",
            "lr is read once, when the agent is built, so it takes a number, not the schedule "
            "'linear(1.0,0.1,10)'; the keys that follow a schedule say so in "
            "docs/hparams_reference.md",
        ),
        ("lr='0.1'", "lr expects float, got \"'0.1'\""),
        ("hidden_sizes=[128,1.5]", "hidden_sizes expects list[int], got '[128,1.5]'"),
        ("hidden_sizes=[a,b]", "hidden_sizes expects list[int], got '[a,b]'"),
        ("hidden_sizes=128", "hidden_sizes expects list[int], got '128'"),
        ("frame_shape=(84,'x')", "frame_shape expects tuple[int], got \"(84,'x')\""),
        ("env_kwargs=[1]", "env_kwargs expects dict, got '[1]'"),
        ("max_grad_norm=big", "max_grad_norm expects optional[float], got 'big'"),
        ("epsilon=soon", "epsilon expects schedule, got 'soon'"),
        ("epsilon=linear(1.0,0.05)", "epsilon: linear(start, end, steps, begin=0): missing"),
        ("epsilon=linear(1.0,0.05,1e4)", "epsilon: linear: steps must be an int, got 10000.0"),
        ("gama=0.9", "unknown hparam 'gama' (did you mean 'gamma'?)"),
        ("eval.episode=3", "unknown hparam 'episode' in group 'eval' (did you mean 'episodes'?)"),
        ("lr.x=3", "lr is float, not a group"),
        ("eval=3", "eval is a group of hparams; set eval.<name> instead"),
        ("lr", "malformed item 'lr' (expected key=value)"),
        ("lr=1,gamma", "malformed item 'gamma' (expected key=value)"),
        ("=1", "malformed item '=1' (empty key)"),
        ("hidden_sizes=[128,128", "unclosed bracket (missing ']')"),
        ("lr=__import__('os')", "lr expects float, got \"__import__('os')\""),
    ],
)
def test_override_errors_are_one_line_user_errors(text, message):
    with pytest.raises(UserError) as e:
        base().override(text)
    assert str(e.value).startswith("--hparam_override: ")
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_unknown_schedule_in_override_lists_registered():
    with pytest.raises(UserError) as e:
        base().override("epsilon=lineer(1.0,0.05,100)")
    assert str(e.value) == (
        "--hparam_override: epsilon: unknown schedule 'lineer' (did you mean 'linear'?); "
        "registered: constant, cosine, exponential, linear, piecewise"
    )


def test_override_is_all_or_nothing():
    hp = base()
    with pytest.raises(UserError):
        hp.override("lr=0.5,batch_size=1.5")
    assert hp.lr == 1e-3


def test_override_schedules():
    hp = base().override("epsilon=0.1")
    assert hp.epsilon == Constant(0.1)
    hp.override("epsilon=piecewise([10,20],[1.0,0.5,0.1])")
    assert hp.epsilon.spec() == "piecewise([10, 20], [1.0, 0.5, 0.1])"
    assert hp.epsilon.value(15) == 0.5
    hp.override("epsilon=exponential(1.0, 0.5, 100, minimum=0.01)")
    assert hp.epsilon.value(100) == 0.5


def test_override_optional():
    hp = base().override("max_grad_norm=10")
    assert hp.max_grad_norm == 10.0
    for word in ["None", "none", "null"]:
        assert (
            hp.override("max_grad_norm=0.5").override(f"max_grad_norm={word}").max_grad_norm is None
        )
    hp = HParams().add("tag", None, "doc", type=str | None)
    assert hp.override("tag=None").tag is None
    assert hp.override("tag='None'").tag == "None"  # quoted: the string
    assert hp.override("tag=abc").tag == "abc"


def test_override_lists_tuples_of_strings_and_bools():
    hp = HParams()
    hp.add("names", ["a"], "doc")
    hp.add("flags", [True], "doc")
    hp.override("names=[x, 'y z'],flags=[false, True]")
    assert hp.names == ["x", "y z"] and hp.flags == [False, True]
    hp.override("names=[]")
    assert hp.names == []
    with pytest.raises(UserError, match=r"flags expects list\[bool\], got '\[maybe\]'"):
        hp.override("flags=[maybe]")
    with pytest.raises(UserError, match=r"flags expects list\[bool\], got '\[1\]'"):
        hp.override("flags=[1]")


def test_override_dicts():
    hp = base().override("env_kwargs={max_episode_steps: 200, render_mode: rgb_array, f: false}")
    assert hp.env_kwargs == {"max_episode_steps": 200, "render_mode": "rgb_array", "f": False}
    hp.override("env_kwargs={'a': {'b': none}}")  # a dict override replaces the whole dict
    assert hp.env_kwargs == {"a": {"b": None}}
    hp.override("env_kwargs.a.b=3,env_kwargs.c=[1,2]")  # dotted keys set single entries
    assert hp.env_kwargs == {"a": {"b": 3}, "c": [1, 2]}
    with pytest.raises(UserError, match="no dict entry 'x' to set 'y' in"):
        hp.override("env_kwargs.x.y=1")
    with pytest.raises(UserError, match="env_kwargs.c expects a JSON literal, got 'linear"):
        hp.override("env_kwargs.c=linear(1.0,0.0,3)")


# --- freeze / copy ---


def test_freeze_is_recursive_and_copy_unfreezes():
    hp = base().freeze()
    assert hp.frozen and hp.eval.frozen
    with pytest.raises(AttributeError, match="frozen"):
        hp.lr = 0.1
    with pytest.raises(AttributeError, match="frozen"):
        hp.eval.episodes = 3
    with pytest.raises(AttributeError, match="frozen"):
        hp.set("eval.episodes", 3)
    with pytest.raises(AttributeError, match="frozen"):
        hp.override("eval.episodes=3")
    with pytest.raises(AttributeError, match="frozen"):
        hp.add("new", 1, "doc")
    assert hp.eval.episodes == 10
    mutable = hp.copy()
    assert not mutable.frozen and not mutable.eval.frozen and mutable == hp
    mutable.eval.episodes = 3
    mutable.hidden_sizes = [1]
    assert hp.eval.episodes == 10 and hp.hidden_sizes == [64, 64]  # a deep copy


def test_freezing_a_group_alone():
    hp = base()
    hp.eval.freeze()
    hp.lr = 0.5
    with pytest.raises(AttributeError):
        hp.override("eval.episodes=3")


def test_frozen_object_is_still_readable():
    hp = base().freeze()
    assert hp.doc("eval.episodes") and hp.type_name("lr") == "float" and "lr" in hp


# --- equality, dicts, JSON, diff ---


def test_equality_compares_values_and_types():
    assert base() == base()
    assert base() != child()
    a = HParams().add("x", 1.0, "doc")
    b = HParams().add("x", 1.0, "doc", type=float | None)
    assert a != b  # same value, different type
    c = HParams().add("x", 1.0, "another doc")
    assert a == c  # docs are not values


def test_to_dict():
    assert base().override("max_grad_norm=1").to_dict() == {
        "lr": 0.001,
        "gamma": 0.99,
        "batch_size": 32,
        "double_q": True,
        "name": "dqn",
        "opt": "adam",
        "hidden_sizes": [64, 64],
        "frame_shape": [84, 84],
        "env_kwargs": {},
        "epsilon": "linear(1.0, 0.05, 10000)",
        "max_grad_norm": 1.0,
        "eval": {"episodes": 10, "every_steps": 10000, "greedy": True},
    }


def test_json_round_trip():
    hp = child().override(FULL + ",frame_shape=(42,42),max_grad_norm=0.5")
    text = hp.to_json()
    data = json.loads(text)  # self-describing: types and docs are in the file
    assert data["hparams"]["epsilon"] == {
        "type": "schedule",
        "value": "linear(1.0, 0.05, 10000)",
        "doc": "Exploration rate schedule.",
    }
    assert data["hparams"]["eval"]["value"]["episodes"]["type"] == "int"
    rebuilt = HParams.from_json(text)
    assert rebuilt == hp
    assert rebuilt.frame_shape == (42, 42)
    assert rebuilt.doc("eval.every_steps") == "Env steps between evaluations."
    assert rebuilt.type_name("max_grad_norm") == "optional[float]"
    assert not rebuilt.frozen
    assert rebuilt.to_json() == text


def _document(entry: dict) -> str:
    return json.dumps({"format": "rl.hparams/1", "hparams": {"x": entry}})


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"format": "other", "hparams": {}}',
        _document({"type": "int", "value": 1.5, "doc": ""}),
        _document({"type": "code", "value": 1, "doc": ""}),
        _document({"type": "int", "doc": ""}),
        _document({"type": "schedule", "value": "exec(1)", "doc": ""}),
        _document({"type": "bool", "value": "true", "doc": ""}),
    ],
)
def test_unreadable_json_is_a_user_error(text):
    with pytest.raises(UserError, match="^hparams JSON is not readable: "):
        HParams.from_json(text)


def test_flat_opens_groups_into_dotted_keys_with_json_data():
    flat = base().flat()
    assert flat["eval.episodes"] == 10 and "eval" not in flat
    assert flat["hidden_sizes"] == [64, 64] and flat["env_kwargs"] == {}
    assert flat["epsilon"] == "linear(1.0, 0.05, 10000)" and flat["max_grad_norm"] is None


def test_flat_scalars():
    flat = base().flat_scalars()
    assert flat["lr"] == 0.001 and flat["double_q"] is True and flat["name"] == "dqn"
    assert flat["eval.episodes"] == 10 and flat["eval.greedy"] is True
    assert flat["hidden_sizes"] == "[64, 64]"
    assert flat["frame_shape"] == "[84, 84]"
    assert flat["env_kwargs"] == "{}"
    assert flat["epsilon"] == "linear(1.0, 0.05, 10000)"
    assert flat["max_grad_norm"] == "None"
    assert "eval" not in flat
    assert all(isinstance(v, bool | int | float | str) for v in flat.values())


def test_diff():
    old, new = base(), child().override("epsilon=0.1,name=x")
    assert old.diff(old.copy()) == []
    assert old.diff(new) == [
        "lr: 0.001 -> 0.0003",
        'name: "dqn" -> "x"',
        'epsilon: "linear(1.0, 0.05, 10000)" -> "constant(0.1)"',
        "eval.episodes: 10 -> 5",
        "n_step: (absent) -> 3",
    ]
    assert new.diff(old)[-1] == "n_step: 3 -> (absent)"
    a = HParams().add("x", 1.0, "doc")
    b = HParams().add("x", "1.0", "doc")
    assert a.diff(b) == ['x: float 1.0 -> str "1.0"']  # a type change is shown
    c = HParams().add("x", None, "doc", type=float | None)
    d = HParams().add("x", "linear(1.0, 0.5, 10)", "doc", type=Schedule | None)
    assert a.diff(c) == ["x: float 1.0 -> optional[float] null"]
    assert c.diff(d) == ['x: optional[float] null -> optional[schedule] "linear(1.0, 0.5, 10)"']


def test_repr():
    hp = HParams().add("lr", 0.001, "doc").add("epsilon", Constant(0.5), "doc")
    hp.add("eval", HParams().add("episodes", 3, "doc"), "doc")
    assert repr(hp) == "HParams(lr=0.001, epsilon=constant(0.5), eval=HParams(episodes=3))"


# --- reference ---


def test_reference_gives_each_key_once_and_each_set_as_changes_from_its_parent(monkeypatch):
    sets = registry.Registry("hparams set")
    monkeypatch.setattr(registry, "hparams", sets)  # these sets only

    def dqn_test():
        """A set registered only for this test."""
        return child()

    def dqn_test_wide():
        """`dqn_test` with wider layers."""
        hp = sets.get("dqn_test")()  # the way a tuned set reaches its parent
        hp.hidden_sizes = [256, 256]
        return hp

    def other_test():
        hp = base()
        hp.lr = 3e-4
        hp.gamma = 0.9
        hp.eval.episodes = 5
        hp.add("n_step", 5, "Return length in steps.")
        hp.add("tau", 0.005, "Polyak rate.")
        return hp

    sets.register("dqn_test", dqn_test)
    sets.register("dqn_test_wide", dqn_test_wide)
    sets.register("other_test", other_test)
    text = reference_markdown()
    # The glossary: one row per key (11 top-level leaves + 3 eval keys + n_step, tau), with the
    # value its declarations (dqn_test and other_test, the sets without a parent) share, none
    # where they disagree, and every meaning it has.
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 16
    assert "| `lr` | `float` | `0.0003` | Adam learning rate. |" in text
    assert "| `epsilon` | `schedule` | `linear(1.0, 0.05, 10000)` |" in text
    assert "| `eval.episodes` | `int` | `5` | Episodes per evaluation. |" in text
    assert '| `name` | `str` | `"dqn"` | Run label. |' in text
    assert "| `gamma` | `float` | (none) | Discount factor. |" in text
    assert (
        "| `n_step` | `int` | (none) | Multi-step return length.<br>In `other_test`: Return "
        "length in steps. |"
    ) in text
    assert "## Sets\n\n### `dqn_test`\nA set registered only for this test.\n" in text
    # A set without a parent: its keys besides the common ones, and what is not the default.
    prose = text.replace("\n", " ")  # paragraphs are wrapped
    assert (
        "No parent. Its values other than the glossary's defaults: `gamma` = `0.99`; "
        "`n_step` = `3`."
    ) in prose
    assert (
        "No parent. Besides the common keys it has `tau`. Its values other than the glossary's "
        "defaults: `gamma` = `0.9`; `n_step` = `5`."
    ) in prose
    # A set with a parent (reached through the registry) lists only what it changes.
    assert "Parent: [`dqn_test`](#dqn_test). Its changes: `hidden_sizes` = `[256, 256]`." in prose


def test_reference_with_no_sets(monkeypatch):
    monkeypatch.setattr(registry, "hparams", registry.Registry("hparams set"))
    assert "(no hparams sets are registered)" in reference_markdown()


# --- every registered set (DESIGN: builds, freezes and round-trips through JSON) ---


@pytest.mark.parametrize("name", registry.hparams.names())
def test_registered_set_builds_freezes_and_round_trips(name):
    hp = registry.get_hparams(name)()
    assert isinstance(hp, HParams)
    assert registry.get_hparams(name)() is not hp  # a factory: a fresh object per call
    hp.freeze()
    rebuilt = HParams.from_json(hp.to_json())
    assert rebuilt == hp and rebuilt.diff(hp) == []


def test_auto_type_takes_the_word_auto_or_its_element_type():
    hp = HParams()
    hp.add("jit", "auto", "XLA or not, or auto.", type="auto[bool]")
    assert hp.type_name("jit") == "auto[bool]" and hp.jit == "auto"
    hp.override("jit=false")
    assert hp.jit is False
    hp.override("jit=auto")
    assert hp.jit == "auto"
    hp.jit = True  # an explicit bool in code, as the registered sets write it
    assert hp.jit is True
    for text in ("1", "yes", "automatic"):
        with pytest.raises(UserError, match=r"jit expects auto\[bool\]"):
            hp.override(f"jit={text}")
    with pytest.raises(UserError, match=r"jit expects auto\[bool\], got 1"):
        hp.jit = 1  # a bool is not an int, nor an int a bool
    for value in ("auto", False):
        hp.jit = value
        rebuilt = HParams.from_json(hp.to_json())
        assert rebuilt == hp and rebuilt.jit == value
    with pytest.raises(ValueError, match="unsupported hparam type"):
        TypeSpec.parse("auto[str]")  # "auto" would be ambiguous


def test_constant_number_reads_float_keys_and_constant_schedules_only():
    hp = HParams().add("lr", 0.5, "doc").add("ent_coef", Constant(0.25), "doc")
    hp.add("clip", None, "doc", type=float | None).add("n", 3, "doc")
    hp.add("eval", HParams().add("epsilon", 0.125, "doc"), "doc")
    assert hp.constant_number("lr") == 0.5 and hp.constant_number("ent_coef") == 0.25
    assert hp.constant_number("eval.epsilon") == 0.125
    assert hp.constant_number("clip") is None and hp.constant_number("n") is None
    hp.ent_coef = "linear(1.0, 0.5, 10)"
    assert hp.constant_number("ent_coef") is None
