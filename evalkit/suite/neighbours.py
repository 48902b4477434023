"""A suite's neighbours: the plugins a user's machine holds beside the subject.

They are instrument, not subject: every rep of every arm loads them as it loads the
subject (the no-plugin arm too, which only drops the subject), the lock hashes each
folder, and scoring is told which skills are the subject's and which a neighbour's
(`scoring/skills.py`), so a misroute between them is named on the row.
"""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import ConfigError
from evalkit.models import SuiteConfig
from evalkit.scoring.skills import Skills
from evalkit.suite.catalog import plugin_manifest_name

STOCK = Path(__file__).resolve().parents[1] / "templates" / "neighbours"
"""evalkit's own neighbours (`stock:`), shipped in the package so a suite folder copied
anywhere still finds them: a notes skill writing to its own folder, a docs helper, a
commit-message helper and a test runner, written with no word about any measurement."""


def neighbour_dirs(root: Path, config: SuiteConfig, where: str) -> list[Path]:
    """Each neighbour's plugin folder, resolved; a path that is not a plugin folder, or one
    that is also the suite's own plugin, is refused in one line (the CLI would load it
    silently wrong or twice)."""
    own = {(root / p).resolve() for p in config.plugins}
    found: list[Path] = []
    for index, entry in enumerate(config.neighbours):
        folder = (STOCK / entry.stock if entry.stock else root / str(entry.path)).resolve()
        named = f"{where}: neighbours[{index}]"
        if not folder.is_dir():
            raise ConfigError(f"{named}: {folder} is not a folder")
        if folder in own or folder in found:
            raise ConfigError(f"{named}: {entry.path or entry.stock} is loaded already")
        plugin_manifest_name(folder, named)
        found.append(folder)
    return found


def plugin_skills(folder: Path, where: str) -> list[str]:
    """The skills a plugin folder gives the CLI, each as it names them: `plugin:skill`,
    the skill its folder's name under skills/."""
    name = plugin_manifest_name(folder, where)
    return [f"{name}:{s.parent.name}" for s in sorted((folder / "skills").glob("*/SKILL.md"))]


def suite_skills(root: Path, config: SuiteConfig, where: str) -> Skills | None:
    """The subject's skills and the neighbours' for scoring; None without neighbours."""
    if not config.neighbours:
        return None
    subject = [s for p in config.plugins for s in plugin_skills((root / p).resolve(), where)]
    near = [s for p in neighbour_dirs(root, config, where) for s in plugin_skills(p, where)]
    clash = sorted(set(subject) & set(near))
    if clash:
        raise ConfigError(f"{where}: neighbours: {clash[0]} is also a skill of the subject")
    return Skills(subject=tuple(subject), neighbours=tuple(near))
