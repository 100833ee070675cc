"""Agent Skills (agentskills.io): finding and validating SKILL.md folders.

A skill is a folder holding SKILL.md: YAML frontmatter (`name`, `description`; optional
`license`, `compatibility`, `metadata`, `allowed-tools`) and a body of instructions. Only
the name, description and path go into the prompt; the model reads the body when it uses
the skill. An invalid skill becomes a warning, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import yaml

from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.protocol import Backend

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_SKILL_BYTES = 10 * 1024 * 1024
NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader where PyYAML has it (its wheels do): a tenth of the pure-Python
parser's time, and a nesting limit instead of a RecursionError."""
KNOWN_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: str
    """The backend path of its SKILL.md."""
    license: str | None = None
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass
class SkillIndex:
    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """(frontmatter, body), or None when the file does not start with a `---` block."""
    if not text.startswith("---"):
        return None
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return None


def validate_skill(folder: str, text: str, path: str) -> tuple[Skill | None, list[str]]:
    """Check a SKILL.md against the spec; returns the skill (if usable) and problems."""
    problems: list[str] = []
    if len(text.encode("utf-8")) > MAX_SKILL_BYTES:
        return None, [f"{path}: SKILL.md is larger than 10 MB"]
    parts = split_frontmatter(text)
    if parts is None:
        return None, [f"{path}: missing YAML frontmatter (a --- block with name and description)"]
    try:
        data = yaml.load(parts[0], Loader=SAFE_LOADER) or {}
    except yaml.YAMLError as exc:
        return None, [f"{path}: frontmatter is not valid YAML ({str(exc).splitlines()[0]})"]
    except RecursionError:  # only the pure-Python parser: libyaml refuses deep nesting
        return None, [f"{path}: frontmatter is not valid YAML (nested too deeply)"]
    if not isinstance(data, dict):
        return None, [f"{path}: frontmatter must be a mapping of fields"]
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not name:
        problems.append(f"{path}: 'name' is required")
    elif len(name) > MAX_NAME:
        problems.append(f"{path}: name is {len(name)} characters; the limit is {MAX_NAME}")
    elif not NAME_PATTERN.match(name):
        problems.append(
            f"{path}: name {name!r} must be lowercase letters, digits and single hyphens"
        )
    elif name != folder:
        problems.append(f"{path}: name {name!r} must match its folder name {folder!r}")
    if not isinstance(description, str) or not description.strip():
        problems.append(f"{path}: 'description' is required")
    elif len(description) > MAX_DESCRIPTION:
        problems.append(
            f"{path}: description is {len(description)} characters; the limit is {MAX_DESCRIPTION}"
        )
    compatibility = data.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY
    ):
        problems.append(
            f"{path}: compatibility must be text of at most {MAX_COMPATIBILITY} characters"
        )
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        problems.append(f"{path}: metadata must be a mapping")
        metadata = {}
    tools = data.get("allowed-tools", "")
    if not isinstance(tools, str):
        problems.append(f"{path}: allowed-tools must be a space-separated string")
        tools = ""
    license_ = data.get("license")
    if license_ is not None and not isinstance(license_, str):
        problems.append(f"{path}: license must be text")
        license_ = None
    unknown = sorted(set(data) - KNOWN_FIELDS)
    fatal = bool(problems)
    if unknown:
        problems.append(f"{path}: unknown frontmatter fields {', '.join(unknown)} (ignored)")
    if fatal or not isinstance(name, str) or not isinstance(description, str):
        return None, problems
    skill = Skill(
        name=name,
        description=" ".join(description.split()),
        path=path,
        license=license_,
        allowed_tools=tuple(tools.split()),
        metadata={str(k): str(v) for k, v in metadata.items()},
    )
    return skill, problems


async def discover_skills(backend: Backend, sources: Sequence[str]) -> SkillIndex:
    """All skills under `sources` (backend folders); a later source overrides an earlier one
    with the same name."""
    index = SkillIndex()
    for source in sources:
        try:
            entries = await backend.ls(source)
        except BackendError:
            continue  # a source that does not exist (yet) is not a problem
        for entry in entries:
            if not entry.is_dir:
                continue
            folder = entry.path.rstrip("/").rsplit("/", 1)[-1]
            path = f"{entry.path.rstrip('/')}/{SKILL_FILE}"
            try:
                text = await backend.read_text(path)
            except NotFoundError:
                continue  # a folder without SKILL.md is not a skill
            except BackendError as exc:
                index.warnings.append(f"{path}: {exc}")
                continue
            skill, problems = validate_skill(folder, text, path)
            index.warnings.extend(problems)
            if skill is not None:
                index.skills[skill.name] = skill
    return index
