"""evalkit is installed from what the project publishes, never by the name `evalkit` on the
package index (an unrelated project there), and the CI recipes are held to every step.

Static and fast, so they stay in `make test`; `tests/e2e/test_ci_recipes.py` (`make
test-recipes`) runs the recipes themselves.
"""

from __future__ import annotations

import ast
import inspect
import re
import tomllib
from pathlib import Path

import pytest

from tests.ci_recipes import Job, Step, github_jobs, gitlab_jobs, run_job

REPO = Path(__file__).resolve().parents[2]
RECIPES = (REPO / "docs" / "ci" / "github-actions.yml", REPO / "docs" / "ci" / "gitlab-ci.yml")
INDEX_NAME = "evalkit"
SCANNED = ("README.md", "Makefile", ".ci/run", "docs", "evalkit/templates", "tests", "bench")
TEXT = {".md", ".yml", ".yaml", ".py", ".toml", ".txt", ".sh", ".cfg", ".json", ""}

COMMAND = re.compile(
    r"\b(?:(?:pip3?|pipx|uv|poetry)(?:\s+(?:pip|tool))?\s+(?:install|add)"
    r"|uvx|pipx\s+run|uv\s+tool\s+run)\b(?P<args>[^\n;&|#]*)"
)
REQUIREMENT = re.compile(rf"{INDEX_NAME}(\[[^\]]*\])?([=<>!~ ].*)?", re.IGNORECASE)
DEFAULTED = re.compile(rf":-{INDEX_NAME}(?![\w.-])", re.IGNORECASE)
PATTERN_CALLS = {"startswith", "endswith", "fnmatch", "match", "search", "fullmatch"}


def index_installs(text: str) -> list[int]:
    """Line numbers where `text` installs or runs the index name: a pip, pipx, uv, uvx or
    poetry command naming it as a requirement (extras and versions too), or a shell default
    that falls back to it, as a recipe once did when a variable was unset."""
    joined = text.replace("\\\n", "  ")  # a continued command is one command
    found = set()
    for match in COMMAND.finditer(joined):
        args = re.sub(r"\$\{[^}]*\}", " ", match.group("args"))  # a variable's words are no name
        tokens = [t.strip(",()") for t in re.split(r"[\s\"'`]+", args)]
        if any(REQUIREMENT.fullmatch(t) for t in tokens if t):
            found.add(joined.count("\n", 0, match.start()) + 1)
    for match in DEFAULTED.finditer(joined):
        found.add(joined.count("\n", 0, match.start()) + 1)
    return sorted(found)


def _scanned_files() -> list[Path]:
    files = []
    for rel in SCANNED:
        path = REPO / rel
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        files += [p for p in candidates if p.is_file() and p.suffix in TEXT]
    return [p for p in files if "__pycache__" not in p.parts]


def _pyproject_names(data: dict[str, object]) -> list[str]:
    """The distribution's own name and every requirement's name, as the index would read them."""
    project = data["project"]
    assert isinstance(project, dict)
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    names = [project["name"]] + [re.split(r"[\[=<>!~; ]", r, maxsplit=1)[0] for r in requirements]
    return [re.sub(r"[-_.]+", "-", str(n)).lower() for n in names]


def test_no_page_recipe_template_or_test_installs_the_index_name() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in _scanned_files()
        for line in index_installs(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert found == []


def test_no_command_in_the_docs_edits_in_place_with_gnu_sed() -> None:
    """`sed -i` with no suffix is GNU's; macOS's sed reads the next word as the suffix."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    found = [
        f"{page.relative_to(REPO)}: {block.group(1)}"
        for page in pages
        for fence in re.finditer(r"^```\w*\n(.*?)^```", page.read_text(), re.M | re.S)
        for block in re.finditer(r"\b(sed\s+(?:-\w+\s+)*-i\b(?!\.\w))", fence.group(1))
    ]
    assert found == []


def test_the_distribution_neither_is_nor_requires_the_index_name() -> None:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert INDEX_NAME not in _pyproject_names(data)
    assert data["project"]["scripts"]["evalkit"] == "evalkit.cli.main:main"


@pytest.mark.parametrize(
    "line",
    [
        "pip install " + INDEX_NAME,
        'python -m pip install -q "' + INDEX_NAME + '[suites]"',
        "uv pip install " + INDEX_NAME + "==0.1.0",
        "pipx install \\\n  " + INDEX_NAME,
        "uvx " + INDEX_NAME + " doctor",
        'pip install "${EVALKIT_INSTALL:-' + INDEX_NAME + '}"',
    ],
)
def test_the_scan_finds_an_install_of_the_index_name(line: str) -> None:
    assert index_installs(f"intro\n{line}\n") == [2]


@pytest.mark.parametrize(
    "line",
    [
        "pip install .",
        'pip install "git+$EVALKIT_GIT@$EVALKIT_COMMIT"',
        "pip install dist/heldout_evalkit-0.1.0-py3-none-any.whl",
        "pip install --no-deps evalkit-demo-checker",
        "evalkit calibrate results/ci",
    ],
)
def test_the_scan_passes_an_install_from_what_the_project_publishes(line: str) -> None:
    assert index_installs(line) == []


def name_pattern_skips(source: str) -> list[int]:
    """Lines of a recipe-driving test that pick steps by a pattern on their name (`step.name
    .startswith("install")`, `fnmatch(s.name, …)`, `re.match(…, s.name)`) or pass a `skip=`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        if any(k.arg == "skip" for k in node.keywords):
            found.append(node.lineno)
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in PATTERN_CALLS:
            continue
        operands = [*node.args, func.value] if isinstance(func, ast.Attribute) else node.args
        if any(isinstance(o, ast.Attribute) and o.attr == "name" for o in operands):
            found.append(node.lineno)
    return sorted(set(found))


def _recipe_drivers() -> list[Path]:
    """The recipe runners and every test that imports one."""
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if path.stem in ("ci_recipes", "recipes") or re.search(
            r"^from tests\.(ci_)?recipes import|^import tests\.(ci_)?recipes", source, re.M
        ):
            found.append(path)
    return found


def test_no_test_skips_recipe_steps_by_a_name_pattern() -> None:
    drivers = _recipe_drivers()
    assert REPO / "tests" / "e2e" / "test_ci_recipes.py" in drivers
    found = [
        f"{p.relative_to(REPO)}:{n}" for p in drivers for n in name_pattern_skips(p.read_text())
    ]
    assert found == []
    assert not {"skip", "only", "exclude"} & set(inspect.signature(run_job).parameters)


@pytest.mark.parametrize(
    "source",
    [
        'run_steps(steps, cwd, env, skip=lambda step: step.name.startswith("install"))',
        '[s for s in steps if not s.name.startswith("install")]',
        'kept = [s for s in steps if not fnmatch(s.name, "install*")]',
        'kept = [s for s in steps if not re.match("install", s.name)]',
    ],
)
def test_the_skip_scan_finds_a_name_pattern(source: str) -> None:
    assert name_pattern_skips(source) == [1]


def test_an_action_without_a_stand_in_fails_the_run(tmp_path: Path) -> None:
    job = Job("j", [Step("j", "cache", uses="actions/cache@v4"), Step("j", "s", run="true")])
    with pytest.raises(KeyError, match="no stand-in for actions/cache"):
        run_job(job, tmp_path, {}, stand_ins={})


def test_a_run_step_with_a_ci_expression_is_refused(tmp_path: Path) -> None:
    job = Job("j", [Step("j", "s", run="echo ${{ secrets.KEY }}")])
    with pytest.raises(ValueError, match="a CI expression"):
        run_job(job, tmp_path, {}, stand_ins={})


def _all_jobs() -> list[tuple[str, Job]]:
    return [
        (p.name, j)
        for p in RECIPES
        for j in (github_jobs if "github" in p.name else gitlab_jobs)(p)
    ]


def _jobs() -> list[tuple[str, Job]]:
    """Every Linux job (each one runs reps under bubblewrap)."""
    return [(r, j) for r, j in _all_jobs() if not j.macos]


def _first(job: Job, command: str) -> int:
    """Index of the first shell step with a line that runs `command` (at the line's start,
    after `&&` or `$SUDO`), or the number of steps when none does."""
    pattern = re.compile(rf"(?:^|&&|\$SUDO)\s*{re.escape(command)}\b", re.M)
    return next((i for i, s in enumerate(job.steps) if pattern.search(s.run)), len(job.steps))


@pytest.mark.parametrize(("recipe", "job"), _jobs(), ids=lambda v: getattr(v, "name", v))
def test_a_recipe_job_installs_confinement_and_calibrates_before_any_model(
    recipe: str, job: Job
) -> None:
    shell = "\n".join(s.run for s in job.steps)
    assert re.search(r"apt-get install\b[^\n]*\bbubblewrap\b[^\n]*\bsocat\b", shell)
    # AppArmor's user-namespace switch (Ubuntu 24.04) set to 0 where it exists, and only there
    assert re.search(
        r"switch=/proc/sys/kernel/apparmor_restrict_unprivileged_userns;?\s*"
        r"if \[ -e \"\$switch\" \]; then\s*(\$SUDO )?"
        r"sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0;?\s*else",
        shell,
    )
    switched = next(i for i, s in enumerate(job.steps) if "sysctl -w" in s.run)
    assert switched < _first(job, "evalkit calibrate")
    # the pin, read from evalkit's one pin file by the evalkit the job just installed
    assert re.findall(r"@anthropic-ai/claude-code@(\$\(evalkit cli pinned\)|\S+)", shell) == [
        "$(evalkit cli pinned)"
    ]
    installs = [
        _first(job, "apt-get install"),
        _first(job, "pip install"),
        _first(job, "npm install"),
    ]
    # the CLI's pin is read by the evalkit already installed (an earlier line of the job)
    assert shell.index("pip install") < shell.index("@anthropic-ai/claude-code@")
    calibrated = _first(job, "evalkit calibrate")
    assert max(installs) < _first(job, "evalkit") and calibrated < len(job.steps)
    assert calibrated < _first(job, "evalkit grid")


def _macos_jobs() -> list[Job]:
    return [j for _, j in _all_jobs() if j.macos]


def test_the_macos_job_runs_the_escape_canaries_under_the_pinned_srt() -> None:
    from evalkit.run.backends import srt

    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    pinned = re.search(r"^SRT_VERSION := (\S+)$", makefile, re.M)
    assert pinned and pinned.group(1) == srt.VERSION
    (job,) = _macos_jobs()
    assert job.runs_on == "macos-latest"
    shell = "\n".join(s.run for s in job.steps)
    assert "apt-get" not in shell and "bubblewrap" not in shell
    assert re.findall(r"@anthropic-ai/sandbox-runtime@(\S+)", shell) == [srt.VERSION]
    assert re.findall(r"@anthropic-ai/claude-code@(\$\(evalkit cli pinned\)|\S+)", shell) == [
        "$(evalkit cli pinned)"
    ]
    # srt goes where evalkit looks for it (EVALKIT_TOOLS_EXTRA), in the step that calibrates too
    assert re.search(r'--prefix "\$EVALKIT_TOOLS_EXTRA/srt"', shell)
    assert all("EVALKIT_TOOLS_EXTRA" in s.env for s in job.steps if not s.uses)
    calibrate = re.findall(r"^\s*evalkit calibrate .*$", shell, re.M)
    assert len(calibrate) == 1
    assert "--confine srt" in calibrate[0]
    assert re.search(r"--policies escape,oracle\b", calibrate[0])
    installed = max(_first(job, "pip install"), _first(job, "npm install"))
    assert installed < _first(job, "evalkit")


def test_a_macos_job_is_refused_here_before_any_step(tmp_path: Path) -> None:
    (job,) = _macos_jobs()
    with pytest.raises(RuntimeError, match="escape-macos: runs on macos-latest; a macOS runner"):
        run_job(job, tmp_path, {}, stand_ins={})
    assert list(tmp_path.iterdir()) == []
