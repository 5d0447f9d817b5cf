#!/usr/bin/env python3
"""Python verifiers v1 as the contract for verifiers-ts outputs.

Imports the real pydantic models of Python `verifiers` v1 from an upstream checkout (or a
bare git mirror, read at `--commit`) and

  schemas <repo> [--out DIR]   writes JSON Schemas (`model_json_schema()`) of `WireEpisode`,
                               `WireTrace`, `EvalConfig` (generic, and narrowed to each
                               plugin pair both tools ship) to tests/fixtures/python_v1/,
                               each with the upstream commit in its `x-upstream` header;
  golden <repo> [--out DIR]    writes a reverse-text run directory (`configs/eval.json`,
                               `traces.jsonl`) with Python's own objects and writers
                               (`verifiers/v1/cli/output.py`: `write_config`, `write_episode`);
  validate <repo>              reads `{"kind": ..., "value": ...}` lines on stdin and answers
                               one JSON line each: `WireEpisode` / `WireTrace` /
                               `EvalConfig.model_validate`, `task_key`, `read_episodes`, the resume
                               loader `verifiers/v1/cli/eval/resume.py:load` on a run dir, the
                               `ValidateConfig`/`ReplayConfig`/`DebugConfig` models and
                               `verifiers/v1/cli/validate.py:load_results`.

Only pydantic 2 (and numpy, when present) are real third-party packages here. Every other
third-party import of the upstream tree (openai, httpx, renderers, prime_sandboxes, ...) is
replaced by an inert placeholder module; `pydantic_config.BaseConfig`, which the models
inherit, by the faithful stand-in in `stubs/pydantic_config`. None of the placeholders is a
type on a serialized field (the tensor fields that are are excluded from JSON schemas).

Rerun after moving the pin (the schemas in tests/fixtures/python_v1/ record the commit):

    python3 scripts/python_v1/contract.py schemas <verifiers-repo> --commit <sha>
    python3 scripts/python_v1/contract.py golden  <verifiers-repo> --commit <sha>

`<verifiers-repo>` is a clone of github.com/PrimeIntellect-ai/verifiers (or its bare mirror).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.abc
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import types
from pathlib import Path

PINNED_COMMIT = "a60a606"
"""The upstream commit the committed fixtures were generated from (abbreviated)."""

HERE = Path(__file__).resolve().parent
UPSTREAM_PATHS = ["verifiers", "environments/reverse_text"]


# ---------------------------------------------------------------- upstream tree


def _git(repo: Path, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, stdout=stdout)


def extract_upstream(repo: Path, commit: str) -> tuple[Path, str]:
    """The upstream tree at `commit` as a directory (cached per commit) and its full sha."""
    full = _git(repo, "rev-parse", f"{commit}^{{commit}}").stdout.decode().strip()
    cache = Path(tempfile.gettempdir()) / f"vf-python-v1-{full[:12]}"
    if not (cache / ".complete").exists():
        tmp = Path(tempfile.mkdtemp(prefix="vf-python-v1-"))
        archive = tmp / "tree.tar"
        with archive.open("wb") as out:
            _git(repo, "archive", "--format=tar", full, *UPSTREAM_PATHS, stdout=out)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp / "src", filter="data")
        archive.unlink()
        (tmp / ".complete").write_text(full)
        try:
            tmp.rename(cache)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
    return cache / "src", full


class _Placeholder(type):
    """A class that stands for any missing third-party name: attributes, calls,
    subscripts and unions all yield placeholders; pydantic treats it as `Any`."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        return cls

    def __getitem__(cls, key):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls


def _any_schema(cls, source, handler):
    from pydantic_core import core_schema

    return core_schema.any_schema()


def _placeholder(name: str) -> type:
    return _Placeholder(name, (), {"__get_pydantic_core_schema__": classmethod(_any_schema)})


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{self.__name__}.{name}")


class MissingModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on `sys.meta_path`: any module no real finder has becomes a placeholder."""

    def __init__(self) -> None:
        self.stubbed: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in ("verifiers", "reverse_text"):
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            try:
                if finder.find_spec(fullname, path, target) is not None:
                    return None
            except Exception:  # noqa: BLE001 - a broken finder just does not have it
                continue
        self.stubbed.add(fullname)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return _PlaceholderModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []


def import_upstream(repo: Path, commit: str) -> str:
    """Puts the upstream tree on `sys.path` behind the stand-ins; returns the full sha."""
    src, full = extract_upstream(repo, commit)
    sys.path[:0] = [str(HERE / "stubs"), str(src), str(src / "environments" / "reverse_text")]
    sys.meta_path.append(MissingModuleFinder())
    return full


# ---------------------------------------------------------------- schemas


def _header(schema: dict, commit: str, model: str) -> dict:
    return {
        "x-upstream": {
            "repository": "https://github.com/PrimeIntellect-ai/verifiers",
            "commit": commit,
            "model": model,
            "generator": "scripts/python_v1/contract.py schemas",
        },
        **schema,
    }


def narrowed_eval_config(taskset_id: str | None, harness_id: str | None, env_id: str = ""):
    """`EvalConfig` with `env` narrowed to the env's config class (`SingleAgentEnvConfig`,
    what every plain taskset resolves to, unless `env_id` names another) and
    `env.taskset` / `env.agent.harness` to the plugins' own config classes, as
    `EvalConfig._resolve_env` narrows them by id at validation (None: the base class)."""
    from pydantic import create_model

    from verifiers.v1.configs.agent import AgentConfig
    from verifiers.v1.configs.cli.eval import EvalConfig
    from verifiers.v1.envs.single_agent import SingleAgentEnvConfig
    from verifiers.v1.utils.loaders import env_config_type, harness_config_type, taskset_config_type

    from verifiers.v1.configs.harness import HarnessConfig
    from verifiers.v1.configs.taskset import TasksetConfig

    taskset_cls = taskset_config_type(taskset_id) if taskset_id else TasksetConfig
    harness_cls = harness_config_type(harness_id) if harness_id else HarnessConfig
    env_cls = env_config_type(taskset_id or "", env_id) if env_id else SingleAgentEnvConfig
    agent = create_model(
        f"AgentConfig_{harness_cls.__name__}",
        __base__=AgentConfig,
        harness=(harness_cls | None, None),
    )
    env = create_model(
        f"{env_cls.__name__}_{taskset_cls.__name__}",
        __base__=env_cls,
        taskset=(taskset_cls, taskset_cls(id=taskset_id or "")),
        agent=(agent, agent()),
    )
    return create_model(
        f"EvalConfig_{taskset_cls.__name__}_{harness_cls.__name__}",
        __base__=EvalConfig,
        env=(env, env()),
    )


def write_schemas(out: Path, commit: str) -> list[Path]:
    from verifiers.v1.episode import WireEpisode
    from verifiers.v1.trace import WireTrace

    models = [
        ("wire_episode", WireEpisode, "verifiers.v1.episode.WireEpisode"),
        ("wire_trace", WireTrace, "verifiers.v1.trace.WireTrace"),
        (
            "eval_config",
            narrowed_eval_config(None, None),
            "verifiers.v1.configs.cli.eval.EvalConfig (single-agent env, base taskset and harness)",
        ),
    ]
    for harness in ("bash", "null"):
        models.append(
            (
                f"eval_config.reverse-text.{harness}",
                narrowed_eval_config("reverse-text", harness),
                f"verifiers.v1.configs.cli.eval.EvalConfig (taskset reverse-text, harness {harness})",
            )
        )
    models.append(
        (
            "eval_config.best-of-n.reverse-text.null",
            narrowed_eval_config("reverse-text", "null", "best-of-n"),
            "verifiers.v1.configs.cli.eval.EvalConfig (env best-of-n, taskset reverse-text, harness null)",
        )
    )
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model, label in models:
        path = out / f"{name}.schema.json"
        # Field names, not the first validation alias: Python writes (and accepts) field names.
        schema = _header(model.model_json_schema(by_alias=False), commit, label)
        path.write_text(json.dumps(schema, indent=2, sort_keys=False) + "\n")
        written.append(path)
    return written


# ---------------------------------------------------------------- golden run

# The first two rows of verifiers-ts's bundled reverse-text sentences, so that `vf eval
# --resume` of this run selects the same tasks (same `task.hash`).
GOLDEN_PROMPTS = [
    "The quick brown fox jumps over the lazy dog.",
    "A journey of a thousand miles begins with a single step.",
]
GOLDEN_REPLIES = [
    "<reversed_text>.god yzal eht revo spmuj xof nworb kciuq ehT</reversed_text>",
    "<reversed_text>.pets elgnis a htiw snigeb selim dnasuoht a fo yenruoj A</reversed_text>",
]
GOLDEN_CONFIG = {
    "env": {
        "taskset": {"id": "reverse-text"},
        "agent": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}},
    },
    "model": "test-model",
    "client": {"base_url": "http://127.0.0.1:9/v1", "api_key_var": "OPENAI_API_KEY"},
    "num_tasks": 2,
    "num_rollouts": 1,
    "max_concurrent": 4,
    "push": False,
    "output_dir": "outputs",
    "run": {"name": "reverse-text--test-model--null--python0"},
}


async def _golden_episode(config, idx: int, prompt: str, reply: str, t0: float):
    from reverse_text.taskset import SYSTEM, ReverseTextData, ReverseTextTask

    from verifiers.v1 import graph
    from verifiers.v1.episode import EnvInfo, Episode, EvalRunInfo
    from verifiers.v1.trace import AgentInfo, ModelCall, TimeSpan, Trace, TraceTask
    from verifiers.v1.types import AssistantMessage, Response, SystemMessage, Usage, UserMessage

    task = ReverseTextTask(
        ReverseTextData(idx=idx, prompt=prompt, system_prompt=SYSTEM, answer=prompt[::-1]),
        config.env.taskset.task,
    )
    agent = config.env.agent
    trace = Trace(
        id=f"{idx:032x}",
        task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=AgentInfo(
            config=agent.model_copy(update={"model": config.model, "sampling": config.sampling}),
            runtime={"type": "subprocess", "id": None},
        ),
    )
    trace.timing.start = t0
    for span, (a, b) in zip(
        ("boot", "setup", "agent"), ((0.0, 0.1), (0.1, 0.2), (0.2, 1.2)), strict=True
    ):
        setattr(getattr(trace.timing, span), "start", t0 + a)
        setattr(getattr(trace.timing, span), "end", t0 + b)
    prompt_messages = [SystemMessage(content=SYSTEM), UserMessage(content=prompt)]
    usage = Usage(prompt_tokens=40 + idx, completion_tokens=20, cost=0.0001)
    response = Response(
        id=f"chatcmpl-{idx}",
        created=int(t0),
        model=config.model,
        message=AssistantMessage(content=reply),
        finish_reason="stop",
        usage=usage,
    )
    node = graph._commit_turn(graph.prepare_turn(trace, prompt_messages), response)
    for i, message_node in enumerate(trace.nodes):
        message_node.timestamp = t0 + 0.3 + i  # fixed, so reruns are byte-identical
    trace.calls.append(
        ModelCall(
            node=node,
            model=config.model,
            sampling=config.sampling,
            endpoint="/chat/completions",
            finish_reason="stop",
            usage=usage,
            time=TimeSpan(start=t0 + 0.3, end=t0 + 1.1),
        )
    )
    trace.stop("single_turn")
    trace.split_agent_time()
    trace.timing.scoring.start = t0 + 1.2
    await task.score(trace)
    trace.timing.scoring.end = t0 + 1.3
    trace.ok = True
    episode = Episode(
        id=f"{idx + 100:032x}",
        env=EnvInfo(id=config.env_id or "reverse-text"),
        task=trace.task,
        run=EvalRunInfo(id="00000000-0000-4000-8000-000000000000", name=config.run.name),
        ok=True,
        traces=[trace],
    )
    return episode


def write_golden(out: Path, commit: str) -> Path:
    from verifiers.v1.cli.output import write_config, write_episode
    from verifiers.v1.configs.cli.eval import EvalConfig

    config = EvalConfig.model_validate(json.loads(json.dumps(GOLDEN_CONFIG)))
    run_dir = out / "golden" / "reverse-text"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    write_config(config, run_dir)
    t0 = 1_800_000_000.0
    for idx, (prompt, reply) in enumerate(zip(GOLDEN_PROMPTS, GOLDEN_REPLIES, strict=True)):
        episode = asyncio.run(_golden_episode(config, idx, prompt, reply, t0 + idx * 10))
        write_episode(run_dir, episode)
    # The producer's build records the upstream commit under test, not a package version.
    traces = run_dir / "traces.jsonl"
    lines = []
    for line in traces.read_text().splitlines():
        row = json.loads(line)
        for trace in row["traces"]:
            trace["verifiers"] = {"version": "0.0.0+unknown", "commit": commit}
        lines.append(json.dumps(row, separators=(",", ":")))
    traces.write_text("\n".join(lines) + "\n")
    (run_dir / "GENERATED.md").write_text(
        f"Written by `scripts/python_v1/contract.py golden` with Python verifiers v1 at {commit}:\n"
        "the config is `EvalConfig.model_validate`d and saved by `cli/output.py:write_config`;\n"
        "each episode is built from `ReverseTextTask`/`Trace`/`Episode`, its reply committed by\n"
        "`graph._commit_turn`, scored by `Task.score` (the taskset's own `lcs` reward) and saved\n"
        "by `cli/output.py:write_episode`. Only `verifiers.version`/`commit` are then set to\n"
        "fixed values so reruns are byte-identical. No model was called.\n"
    )
    return run_dir


# ---------------------------------------------------------------- validate


def _validate_one(kind: str, value):
    from verifiers.v1.cli.eval import resume
    from verifiers.v1.cli.output import read_episodes
    from verifiers.v1.configs.cli.eval import EvalConfig
    from verifiers.v1.episode import WireEpisode
    from verifiers.v1.task import task_key
    from verifiers.v1.trace import WireTrace

    if kind == "episode":
        WireEpisode.model_validate(value)
        return {"ok": True}
    if kind == "trace":
        WireTrace.model_validate(value)
        return {"ok": True}
    if kind == "eval_config":
        EvalConfig.model_validate(value)
        return {"ok": True}
    if kind in ("validate_config", "replay_config", "debug_config"):
        # the saved configs of `vf validate` / `vf replay` / `vf debug` (configs/<cli>.json)
        from verifiers.v1.configs.cli.debug import DebugConfig
        from verifiers.v1.configs.cli.replay import ReplayConfig
        from verifiers.v1.configs.cli.validate import ValidateConfig

        model = {"validate_config": ValidateConfig, "replay_config": ReplayConfig, "debug_config": DebugConfig}[kind]
        model.model_validate(value)
        return {"ok": True}
    if kind == "validate_resume":
        # value: {"dir": validate run dir (a copy: load rewrites results.jsonl), "keys": [...], "mode": m}
        from verifiers.v1.cli.validate import load_results

        rows, owed = load_results(Path(value["dir"]), value["keys"], value["mode"])
        return {"ok": True, "kept": [r["task_key"] for r in rows], "owed": owed}
    if kind == "task_key":
        return {"ok": True, "key": task_key(value)}
    if kind == "task_data_key":
        # value: one task row as a taskset's load() gives it; hashed as Python's Task.hash
        from verifiers.v1.task import TaskData

        dumped = TaskData.model_validate(value).model_dump(mode="json", exclude_none=True)
        return {"ok": True, "key": task_key(dumped)}
    if kind == "line_task_key":
        # value: one raw traces.jsonl line, parsed here so Python's own number types stay
        row = json.loads(value)
        return {"ok": task_key(row["task"]["data"]) == row["task"]["hash"], "key": task_key(row["task"]["data"])}
    if kind == "read_episodes":
        # value: a run dir; Python's reader (used by `replay`) over its traces.jsonl
        return {"ok": True, "count": len(read_episodes(Path(value), WireTrace))}
    if kind == "resume":
        # value: {"dir": run dir (a copy: load rewrites traces.jsonl), "keys": [...], "num_rollouts": n}
        kept, owed = resume.load(Path(value["dir"]), value["keys"], value["num_rollouts"])
        return {"ok": True, "kept": [e.id for e in kept], "owed": owed}
    raise ValueError(f"unknown kind {kind!r}")


def validate_stream() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = _validate_one(request["kind"], request["value"])
        except Exception as e:  # noqa: BLE001 - every failure is an answer
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["schemas", "golden", "validate"])
    parser.add_argument("repo", type=Path, help="verifiers clone or bare mirror")
    parser.add_argument("--commit", default=PINNED_COMMIT)
    parser.add_argument(
        "--out",
        type=Path,
        default=HERE.parent.parent / "tests" / "fixtures" / "python_v1",
    )
    args = parser.parse_args()
    commit = import_upstream(args.repo, args.commit)
    os.environ.setdefault("NO_COLOR", "1")
    if args.command == "schemas":
        for path in write_schemas(args.out, commit):
            print(path)
    elif args.command == "golden":
        print(write_golden(args.out, commit))
    else:
        validate_stream()
    return 0


if __name__ == "__main__":
    sys.exit(main())
