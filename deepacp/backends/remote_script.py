"""The file operations of a remote workspace, run on the remote machine as `python3 -c`.

Standalone — the standard library only, Python 3.6 or later — because it is not imported
here: `deepacp.backends.remote` sends this file's text as the program and one JSON request
on stdin, and reads one JSON answer from stdout. No path or content is ever part of a
command line. Paths arrive as workspace paths already checked lexically
(`deepacp.backends.paths`); here they are resolved with realpath on the machine that holds
them, and refused when they lead outside the root (the same rule as `paths.confine`).
"""

import base64
import json
import os
import re
import stat
import sys

SKIPPED_DIRS = {".git"}
LINE_CHARS = 1204  # what a match may show before it is clipped (`pysearch._shown`)


class Refused(Exception):
    """A fault to report: a kind the caller turns into the model's message, and detail."""

    def __init__(self, kind, detail=""):
        Exception.__init__(self, kind)
        self.kind = kind
        self.detail = detail


def confine(root, rel, follow_final=True):
    """The real path of workspace path `rel`, refusing one that resolves outside `root`."""
    full = os.path.join(root, rel) if rel else root
    if follow_final:
        real = os.path.realpath(full)
    elif rel:
        real = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
    else:
        real = root
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        raise Refused("outside")
    checked = [real] if follow_final else []
    parent = os.path.dirname(real)
    while parent.startswith(root.rstrip("/") + "/"):
        checked.append(parent)
        parent = os.path.dirname(parent)
    if any(os.path.islink(p) for p in checked):  # realpath left a link it could not resolve
        raise Refused("loop")
    return real


def _stat(real):
    try:
        return os.stat(real)
    except FileNotFoundError:
        raise Refused("missing") from None
    except OSError as exc:
        raise Refused("oserror", exc.strerror or str(exc)) from None


def probe(request):
    root = os.path.realpath(request["root"])
    if not os.path.isdir(root):
        raise Refused("missing" if not os.path.exists(root) else "notdir")
    return {"root": root}


def ls(request):
    real = confine(request["root"], request["path"])
    if not stat.S_ISDIR(_stat(real).st_mode):
        raise Refused("notdir")
    entries = []
    for entry in sorted(os.scandir(real), key=lambda e: e.name)[: request["limit"]]:
        try:
            is_dir = entry.is_dir()
            size = None if is_dir else entry.stat().st_size
        except OSError:
            is_dir, size = False, None
        entries.append([entry.name, is_dir, size])
    return entries


def read(request):
    real = confine(request["root"], request["path"])
    info = _stat(real)
    if stat.S_ISDIR(info.st_mode):
        raise Refused("isdir")
    if not stat.S_ISREG(info.st_mode):
        raise Refused("notreg")
    if info.st_size > request["limit"]:
        raise Refused("toolarge", str(info.st_size))
    try:
        with open(real, "rb") as handle:
            data = handle.read(request["limit"] + 1)
    except OSError as exc:
        raise Refused("oserror", exc.strerror or str(exc)) from None
    return base64.b64encode(data).decode("ascii")


def write(request):
    real = confine(request["root"], request["path"])
    if os.path.isdir(real):
        raise Refused("isdir")
    data = base64.b64decode(request["data"])
    try:
        os.makedirs(os.path.dirname(real), exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(real).st_mode)
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        tmp = os.path.join(
            os.path.dirname(real), "." + os.path.basename(real) + "." + os.urandom(4).hex() + ".tmp"
        )
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, real)
        except BaseException:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise Refused("oserror", exc.strerror or str(exc)) from None
    return None


def resolve(request):
    real = confine(request["root"], request["path"])
    return "" if real == request["root"] else os.path.relpath(real, request["root"])


def delete(request):
    real = confine(request["root"], request["path"], follow_final=False)
    try:
        if os.path.islink(real) or not os.path.isdir(real):
            os.unlink(real)
        else:
            os.rmdir(real)
    except FileNotFoundError:
        raise Refused("missing") from None
    except OSError as exc:
        if os.path.isdir(real):
            raise Refused("notempty") from None
        raise Refused("oserror", exc.strerror or str(exc)) from None
    return None


def files(request):
    """Regular files under `start` (workspace paths), links not followed, `.git` skipped,
    with the text of every .gitignore met on the way (the caller applies them)."""
    root, start = request["root"], request["path"]
    real = confine(root, start)
    mode = _stat(real).st_mode
    if not stat.S_ISDIR(mode):
        return {"files": [start] if stat.S_ISREG(mode) else [], "ignores": {}}
    found, ignores = [], {}
    parts = start.split("/") if start else []
    for depth in range(len(parts)):  # the .gitignore files above `start` apply too
        above = "/".join(parts[:depth])
        gitignore = os.path.join(confine(root, above), ".gitignore")
        if os.path.isfile(gitignore) and not os.path.islink(gitignore):
            ignores[above] = _text(gitignore)
    for directory, dirs, names in os.walk(real):
        rel = os.path.relpath(directory, root)
        rel = "" if rel == "." else rel
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        for name in names:
            path = os.path.join(rel, name) if rel else name
            try:
                if stat.S_ISREG(os.lstat(os.path.join(directory, name)).st_mode):
                    found.append(path)
            except OSError:
                continue
            if name == ".gitignore":
                ignores[rel] = _text(os.path.join(directory, name))
        if len(found) > request["limit"]:
            break
    return {"files": found, "ignores": ignores}


def _text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def grep(request):
    """Matching lines of the listed files, in their order, up to `limit`."""
    root, limit = request["root"], request["limit"]
    pattern = request["pattern"] if request["regex"] else re.escape(request["pattern"])
    try:
        matcher = re.compile(pattern, re.IGNORECASE if request["ignore_case"] else 0)
    except re.error as exc:
        raise Refused("badregex", str(exc)) from None
    found = []
    for path in request["files"]:
        try:
            handle = open(confine(root, path), "rb")  # noqa: SIM115 (closed by the with)
        except (OSError, Refused):
            continue
        with handle:
            if b"\0" in handle.read(8192):
                continue
            handle.seek(0)
            for number, line in enumerate(handle, start=1):
                text = line.decode("utf-8", "replace")
                if matcher.search(text.rstrip("\r\n")):
                    found.append([path, number, text[:LINE_CHARS]])
                    if len(found) >= limit:
                        return found
    return found


OPERATIONS = {
    "probe": probe,
    "ls": ls,
    "read": read,
    "write": write,
    "resolve": resolve,
    "delete": delete,
    "files": files,
    "grep": grep,
}


def main():
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    try:
        answer = {"ok": OPERATIONS[request["op"]](request)}
    except Refused as exc:
        answer = {"error": exc.kind, "detail": exc.detail}
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main()
