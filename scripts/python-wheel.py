#!/usr/bin/env python3
"""Builds the switchboard Python package's wheel with the standard library alone.

    python3 scripts/python-wheel.py metastub/python OUT_DIR      # prints the wheel's path

The release archive carries the wheel. `pip wheel` would need `wheel` (or setuptools >= 70.1) in
the interpreter, or PyPI for an isolated build; the build must run offline with a stock Python
3.11+, so this writes the pure-Python wheel that setuptools would (PEP 427: the package's files,
a dist-info with METADATA from pyproject.toml, WHEEL and RECORD). `pip install` of the result is
checked by the release test.
"""
import base64
import hashlib
import os
import sys
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    sys.exit("python-wheel: Python 3.11 or newer is needed (tomllib)")

# fixed timestamps, so that the same sources give the same wheel
EPOCH = (1980, 1, 1, 0, 0, 0)


def metadata(project, readme):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    license_text = project.get("license", {}).get("text")
    if license_text:
        lines.append(f"License: {license_text}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme


def package_files(source_root):
    for directory, dirs, files in os.walk(source_root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        for name in sorted(files):
            if not name.endswith((".pyc", ".pyo")):
                path = os.path.join(directory, name)
                yield path, os.path.relpath(path, source_root).replace(os.sep, "/")


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def build(package_dir, out_dir):
    with open(os.path.join(package_dir, "pyproject.toml"), "rb") as f:
        pyproject = tomllib.load(f)
    project = pyproject["project"]
    name, version = project["name"].replace("-", "_"), project["version"]
    readme_file = project.get("readme", "README.md")
    with open(os.path.join(package_dir, readme_file), encoding="utf-8") as f:
        readme = f.read()
    where = pyproject.get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {}).get("where", ["."])
    source_root = os.path.join(package_dir, where[0])

    dist_info = f"{name}-{version}.dist-info"
    entries = [(arc, open(path, "rb").read()) for path, arc in package_files(source_root)]
    if not entries:
        sys.exit(f"python-wheel: no files under {source_root}")
    top_level = sorted({arc.split("/")[0] for arc, _ in entries if "/" in arc})
    entries += [
        (f"{dist_info}/METADATA", metadata(project, readme).encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: switchboard python-wheel.py\n"
                               b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/top_level.txt", ("\n".join(top_level) + "\n").encode()),
    ]
    record = "\n".join([record_line(arc, data) for arc, data in entries] + [f"{dist_info}/RECORD,,"]) + "\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))

    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, f"{name}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data in entries:
            info = zipfile.ZipInfo(arc, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python-wheel.py PACKAGE_DIR OUT_DIR")
    print(build(sys.argv[1], sys.argv[2]))
