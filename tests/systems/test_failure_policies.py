"""What the rendered failure policies do with each way a training Pod can end.

No cluster runs here, so the two controllers that read the policies are modelled after their
source, as small functions over the rendered manifests (not over copies of the rules):
- the Job controller's podFailurePolicy (Kubernetes pkg/controller/job, `matchPodFailurePolicy`):
  rules in order, the first whose `onExitCodes` (operator In, the named container) or
  `onPodConditions` (type and status) matches decides; `Ignore` = replace the Pod, count nothing;
  `FailJob` = fail the Job at once with reason `PodFailurePolicy` and the message
  "Container <c> for pod <ns>/<pod> failed with exit code <n> matching FailJob rule at index <i>"
  or "Pod <ns>/<pod> has condition <type> matching FailJob rule at index <i>"; no match = count
  the failure, and the Job fails with `BackoffLimitExceeded` once more than `backoffLimit`
  failures are counted;
- the JobSet controller's failurePolicy (kubernetes-sigs/jobset v0.12.0,
  pkg/controllers/failure_policy.go): rules in order, the first whose `onJobFailureReasons`
  contains the failed Job's reason and one of whose `onJobFailureMessagePatterns` is found in
  its message (Go `regexp.MatchString`: unanchored, like `re.search`) decides; no match =
  `RestartJobSet`, which counts against `maxRestarts`.
The messages are built from those format strings by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from jobset_schema import child_jobs

from rl.systems.manifests import (
    EXIT_DIVERGED,
    EXIT_PREEMPTED,
    EXIT_USER_ERROR,
    JobSpec,
    tpu_job_manifests,
    worker_job_manifests,
)
from rl.systems.tpu_types import parse_tpu

NAMESPACE = "team-rl"
NAME = "rl-dqn-tiny-20261121-120000-ab12"


@dataclass(frozen=True)
class PodEnd:
    """How a failed Pod ended: its trainer container's exit code and its conditions."""

    exit_code: int
    conditions: tuple[str, ...] = ()


# The ways a run's Pod fails, and what must follow.
PREEMPTED_CHECKPOINTED = PodEnd(EXIT_PREEMPTED, ("DisruptionTarget",))  # Spot/TPU preemption
PREEMPTED_KILLED = PodEnd(137, ("DisruptionTarget",))  # SIGKILL at the end of the grace period
PREEMPTED_UNHANDLED = PodEnd(143, ("DisruptionTarget",))  # a train.py that ignores SIGTERM
DELETED_CHECKPOINTED = PodEnd(EXIT_PREEMPTED)  # `kubectl delete pod`: SIGTERM, no condition
USER_ERROR = PodEnd(EXIT_USER_ERROR)
DIVERGED = PodEnd(EXIT_DIVERGED)
CRASHED = PodEnd(1)  # a traceback
OOM_KILLED = PodEnd(137)  # the kernel's SIGKILL, no disruption


def test_the_policies_use_train_pys_exit_statuses():
    """The numbers the policies key on are train.py's own (rl.errors): 75 preempted, 2 user
    error (UserError), 3 diverged."""
    from rl import errors

    assert (EXIT_PREEMPTED, EXIT_USER_ERROR, EXIT_DIVERGED) == (75, 2, 3)
    assert (errors.PREEMPTED_EXIT, errors.DIVERGED_EXIT) == (EXIT_PREEMPTED, EXIT_DIVERGED)


def spec() -> JobSpec:
    args = ["--sys=local", "--hparams=dqn_tiny", "--output_dir=gs://bkt/runs/x"]
    return JobSpec(NAME, NAMESPACE, "us-docker.pkg.dev/p/rl/rl:1", args, "dqn_tiny")


def job_controller(job: dict, pod_name: str, end: PodEnd) -> tuple[str, str | None]:
    """(action, Job failure message or None) of the Job controller for one failed Pod."""
    rules = job["spec"]["podFailurePolicy"]["rules"]
    containers = [c["name"] for c in job["spec"]["template"]["spec"]["containers"]]
    for index, rule in enumerate(rules):
        codes = rule.get("onExitCodes")
        if codes is not None:
            assert codes["operator"] == "In"
            container = codes.get("containerName")
            if (container is None or container in containers) and end.exit_code in codes["values"]:
                name = container or containers[0]
                message = (
                    f"Container {name} for pod {NAMESPACE}/{pod_name} failed with exit code "
                    f"{end.exit_code} matching FailJob rule at index {index}"
                )
                return rule["action"], message if rule["action"] == "FailJob" else None
            continue
        for pattern in rule.get("onPodConditions", []):
            if pattern["type"] in end.conditions and pattern.get("status", "True") == "True":
                message = (
                    f"Pod {NAMESPACE}/{pod_name} has condition {pattern['type']} matching "
                    f"FailJob rule at index {index}"
                )
                return rule["action"], message if rule["action"] == "FailJob" else None
    return "Count", None


def job_outcome(job: dict, ends: list[PodEnd]) -> str:
    """The one Pod of a Job failing as `ends` says, one Pod after another: 'running' (a new Pod
    was started after the last), 'failed: <reason>'."""
    counted = 0
    for attempt, end in enumerate(ends):
        action, _ = job_controller(job, f"{job['metadata']['name']}-{attempt:05d}", end)
        if action == "FailJob":
            return "failed: PodFailurePolicy"
        if action == "Count":
            counted += 1
            if counted > job["spec"]["backoffLimit"]:
                return "failed: BackoffLimitExceeded"
    return "running"


def jobset_controller(jobset: dict, end: PodEnd, pod_index: int = 1) -> str:
    """The JobSet's action when Pod `pod_index` of its child Job ends as `end`."""
    (job,) = child_jobs(jobset)
    pod = f"{job['metadata']['name']}-{pod_index}-x7k2p"
    action, message = job_controller(job, pod, end)
    if action == "Ignore":
        return "Pod replaced"  # the group would go on without a restart
    if action == "FailJob":
        reason = "PodFailurePolicy"
    else:  # counted; backoffLimit 0 fails the Job at the first one
        assert job["spec"]["backoffLimit"] == 0
        reason, message = "BackoffLimitExceeded", "Job has reached the specified backoff limit"
    for rule in jobset["spec"]["failurePolicy"]["rules"]:
        reasons = rule.get("onJobFailureReasons") or [reason]
        patterns = rule.get("onJobFailureMessagePatterns") or [""]
        if reason in reasons and any(re.search(p, message) for p in patterns):
            return rule["action"]
    return "RestartJobSet"


@pytest.mark.parametrize(
    "manifests",
    [
        pytest.param(lambda: tpu_job_manifests(spec(), parse_tpu("v5e-4")), id="tpu-one-host"),
        pytest.param(lambda: worker_job_manifests(spec(), workers=1), id="one-worker"),
    ],
)
def test_one_pod_jobs(manifests):
    job = manifests()[-1]
    assert job["kind"] == "Job" and job["spec"]["backoffLimit"] == 3
    # Preemptions are never counted: any number of them in a row leaves the Job running.
    for end in (PREEMPTED_CHECKPOINTED, PREEMPTED_KILLED, PREEMPTED_UNHANDLED):
        assert job_controller(job, "p", end) == ("Ignore", None)
    assert job_controller(job, "p", DELETED_CHECKPOINTED) == ("Ignore", None)
    assert job_outcome(job, [PREEMPTED_CHECKPOINTED] * 20 + [DELETED_CHECKPOINTED] * 5) == (
        "running"
    )
    # A user error or a divergence fails the Job at the first Pod: no retry.
    for end, index in ((USER_ERROR, 2), (DIVERGED, 2)):
        action, message = job_controller(job, "p", end)
        assert action == "FailJob"
        assert message == (
            f"Container trainer for pod {NAMESPACE}/p failed with exit code {end.exit_code} "
            f"matching FailJob rule at index {index}"
        )
        assert job_outcome(job, [end]) == "failed: PodFailurePolicy"
    # Crashes are counted: the 4th fails the Job; preemptions in between change nothing.
    assert job_controller(job, "p", CRASHED) == ("Count", None)
    assert job_controller(job, "p", OOM_KILLED) == ("Count", None)
    assert job_outcome(job, [CRASHED, OOM_KILLED, CRASHED]) == "running"
    assert job_outcome(job, [CRASHED, PREEMPTED_KILLED, CRASHED, CRASHED]) == "running"
    assert job_outcome(job, [CRASHED, OOM_KILLED, CRASHED, CRASHED]) == (
        "failed: BackoffLimitExceeded"
    )


@pytest.mark.parametrize(
    "manifests",
    [
        pytest.param(lambda: tpu_job_manifests(spec(), parse_tpu("v5e-16")), id="tpu-multi-host"),
        pytest.param(lambda: worker_job_manifests(spec(), workers=3), id="three-workers"),
    ],
)
def test_jobsets_restart_the_whole_group(manifests):
    (jobset,) = manifests()
    assert jobset["kind"] == "JobSet"
    policy = jobset["spec"]["failurePolicy"]
    assert policy["maxRestarts"] == 3 and policy["restartStrategy"] == "BlockingRecreate"
    for pod_index in (0, 1, 2):
        # A preempted Pod (any of them) restarts the group, uncounted.
        for end in (PREEMPTED_CHECKPOINTED, PREEMPTED_KILLED, PREEMPTED_UNHANDLED):
            assert jobset_controller(jobset, end, pod_index) == (
                "RestartJobSetAndIgnoreMaxRestarts"
            )
        assert jobset_controller(jobset, DELETED_CHECKPOINTED, pod_index) == (
            "RestartJobSetAndIgnoreMaxRestarts"
        )
        # A user error or a divergence ends the JobSet.
        assert jobset_controller(jobset, USER_ERROR, pod_index) == "FailJobSet"
        assert jobset_controller(jobset, DIVERGED, pod_index) == "FailJobSet"
        # A crash restarts the group and counts against maxRestarts.
        assert jobset_controller(jobset, CRASHED, pod_index) == "RestartJobSet"
        assert jobset_controller(jobset, OOM_KILLED, pod_index) == "RestartJobSet"


@pytest.mark.parametrize("code", [1, 4, 20, 22, 23, 32, 74, 76, 127, 175, 255])
def test_jobset_message_patterns_match_only_their_codes(code):
    """Only 75 reads as a preemption and only 2 and 3 as fatal, even in the FailJob message
    format (which the child Job never produces for these codes)."""
    (jobset,) = worker_job_manifests(spec(), workers=2)
    message = (
        f"Container trainer for pod {NAMESPACE}/{NAME}-workers-0-1-x7k2p failed with exit code "
        f"{code} matching FailJob rule at index 1"
    )
    for rule in jobset["spec"]["failurePolicy"]["rules"]:
        assert not any(re.search(p, message) for p in rule["onJobFailureMessagePatterns"])
