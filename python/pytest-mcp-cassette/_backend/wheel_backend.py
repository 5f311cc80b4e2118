"""The build backend of pytest-mcp-cassette, and the writer of its wheels (docs/pytest.md,
"Wheels"). Standard library only: PEP 517 hooks for pip, and a command line for
scripts/package-wheel.sh.

Two kinds of wheel come out of one writer:

* the pure wheel (``py3-none-any``): the plugin alone, which finds the binary through
  ``$MCP_CASSETTE_BINARY`` or ``PATH``;
* a platform wheel (``py3-none-<platform>``): the plugin plus the native binary as
  ``<name>.data/scripts/mcp-cassette``, which an installer puts in the environment's scripts
  directory (``bin/``), next to ``python`` — the layout ruff's and uv's wheels use. Its platform
  tag is read from the binary itself (ELF, Mach-O or PE header; for glibc, the newest symbol
  version it needs).

    python3 wheel_backend.py --out DIR                      the pure wheel
    python3 wheel_backend.py --out DIR --binary PATH [--platform-tag TAG]
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import os
import re
import struct
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

PROJECT = Path(__file__).resolve().parent.parent
PACKAGE = "pytest_mcp_cassette"
# Fixed entry times make the same inputs give the same wheel, byte for byte.
EPOCH = (1980, 1, 1, 0, 0, 0)


def _project() -> Dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        sys.exit("pytest-mcp-cassette: building needs Python 3.11 or later (tomllib)")
    with open(PROJECT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _dist_name(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata(project: Dict) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"License: {project['license']}",
        f"Keywords: {','.join(project.get('keywords', []))}",
        f"Requires-Python: {project['requires-python']}",
    ]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    readme = (PROJECT / project["readme"]).read_text(encoding="utf-8")
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme


def _entry_points(project: Dict) -> str:
    out = []
    for group, points in sorted(project.get("entry-points", {}).items()):
        out.append(f"[{group}]")
        out += [f"{name} = {target}" for name, target in sorted(points.items())]
        out.append("")
    return "\n".join(out)


# ---- the platform tag, from the binary's own header ----

_ELF_MACHINES = {62: "x86_64", 183: "aarch64", 3: "i686", 40: "armv7l", 243: "riscv64"}
_MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}
# The oldest macOS each architecture's Rust target supports (what a default build runs on).
_MACOS_MIN = {"x86_64": "10_12", "arm64": "11_0", "universal2": "10_12"}
_PE_MACHINES = {0x8664: "win_amd64", 0xAA64: "win_arm64", 0x14C: "win32"}


def platform_tag(binary: Path) -> str:
    """The wheel platform tag a binary runs on, read from its header. Raises ValueError."""
    data = binary.read_bytes()
    if data[:4] == b"\x7fELF":
        return _elf_tag(data)
    if data[:4] in (b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf"):
        endian = "<" if data[:4] == b"\xcf\xfa\xed\xfe" else ">"
        (cpu,) = struct.unpack_from(endian + "I", data, 4)
        arch = _MACHO_CPUS.get(cpu)
        if arch is None:
            raise ValueError(f"a Mach-O binary for an unknown CPU type {cpu:#x}")
        return f"macosx_{_MACOS_MIN[arch]}_{arch}"
    if data[:4] == b"\xca\xfe\xba\xbe":  # a fat (universal) Mach-O
        return f"macosx_{_MACOS_MIN['universal2']}_universal2"
    if data[:2] == b"MZ":
        (pe,) = struct.unpack_from("<I", data, 0x3C)
        if data[pe : pe + 4] == b"PE\0\0":
            (machine,) = struct.unpack_from("<H", data, pe + 4)
            if machine in _PE_MACHINES:
                return _PE_MACHINES[machine]
        raise ValueError("a PE binary for an unknown machine")
    raise ValueError("not an ELF, Mach-O or PE executable")


def _elf_tag(data: bytes) -> str:
    bits, endian_byte = data[4], data[5]
    endian = "<" if endian_byte == 1 else ">"
    (machine,) = struct.unpack_from(endian + "H", data, 18)
    arch = _ELF_MACHINES.get(machine)
    if arch is None:
        raise ValueError(f"an ELF binary for an unknown machine {machine}")
    if bits == 2:
        (phoff,) = struct.unpack_from(endian + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(endian + "HH", data, 0x36)
    else:
        (phoff,) = struct.unpack_from(endian + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(endian + "HH", data, 0x2A)
    interp = b""
    for i in range(phnum):
        at = phoff + i * phentsize
        (p_type,) = struct.unpack_from(endian + "I", data, at)
        if p_type == 3:  # PT_INTERP: the dynamic loader's path
            word, at_offset, at_size = ("Q", 8, 32) if bits == 2 else ("I", 4, 16)
            (offset,) = struct.unpack_from(endian + word, data, at + at_offset)
            (size,) = struct.unpack_from(endian + word, data, at + at_size)
            interp = data[offset : offset + size]
    # glibc binaries name the versions of the symbols they bind to (GLIBC_2.34, …); the newest
    # one is the oldest glibc the binary runs on. Below 2.17 nothing is built any more.
    needed = [(int(a), int(b)) for a, b in re.findall(rb"GLIBC_(\d+)\.(\d+)", data)]
    if b"ld-musl" in interp or (not interp and not needed):
        # Dynamically linked against musl, or static (Rust's static Linux targets are musl).
        return f"musllinux_1_2_{arch}"
    major, minor = max(needed + [(2, 17)])
    return f"manylinux_{major}_{minor}_{arch}"


# ---- the wheel ----


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _sources() -> List[Tuple[str, bytes]]:
    root = PROJECT / "src" / PACKAGE
    files = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and (path.suffix == ".py" or path.name == "py.typed"):
            files.append((path.relative_to(PROJECT / "src").as_posix(), path.read_bytes()))
    return files


def write_wheel(
    out_dir: Path,
    binary: Optional[Path] = None,
    tag: Optional[str] = None,
    editable: bool = False,
) -> Path:
    """Writes one wheel into out_dir and returns its path."""
    project = _project()
    dist = _dist_name(project["name"])
    version = project["version"]
    if binary is not None and tag is None:
        tag = platform_tag(binary)
    platform = tag or "any"
    info = f"{dist}-{version}.dist-info"
    entries: List[Tuple[str, bytes, int]] = []
    if editable:
        # An import path entry pointing at the sources: edits take effect without a reinstall.
        pth = f"{(PROJECT / 'src').resolve()}\n".encode()
        entries.append((f"__editable__.{dist}.pth", pth, 0o644))
    else:
        entries += [(name, data, 0o644) for name, data in _sources()]
    if binary is not None:
        exe = "mcp-cassette.exe" if platform.startswith("win") else "mcp-cassette"
        entries.append((f"{dist}-{version}.data/scripts/{exe}", binary.read_bytes(), 0o755))
    wheel_meta = (
        "Wheel-Version: 1.0\n"
        "Generator: pytest-mcp-cassette wheel_backend\n"
        f"Root-Is-Purelib: {'false' if binary is not None else 'true'}\n"
        f"Tag: py3-none-{platform}\n"
    )
    entries += [
        (f"{info}/METADATA", _metadata(project).encode(), 0o644),
        (f"{info}/WHEEL", wheel_meta.encode(), 0o644),
        (f"{info}/entry_points.txt", _entry_points(project).encode(), 0o644),
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data, _ in entries:
        writer.writerow([name, _record_hash(data), len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    entries.append((f"{info}/RECORD", record.getvalue().encode(), 0o644))

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{dist}-{version}-py3-none-{platform}.whl"
    partial = path.with_suffix(".whl.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            entry = zipfile.ZipInfo(name, EPOCH)
            entry.compress_type = zipfile.ZIP_DEFLATED
            # Unix permission bits: installers keep the executable bit of scripts from here.
            entry.external_attr = (0o100000 | mode) << 16
            zf.writestr(entry, data)
    os.replace(partial, path)
    return path


def write_sdist(out_dir: Path) -> Path:
    project = _project()
    base = f"{_dist_name(project['name'])}-{project['version']}"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{base}.tar.gz"
    files = ["pyproject.toml", "README.md", "_backend/wheel_backend.py"]
    files += [f"src/{name}" for name, _ in _sources()]
    with tarfile.open(path, "w:gz") as tar:
        for name in files:
            info = tar.gettarinfo(str(PROJECT / name), arcname=f"{base}/{name}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 315532800, 0, 0, "", ""
            with open(PROJECT / name, "rb") as f:
                tar.addfile(info, f)
    return path


# ---- PEP 517 and PEP 660 hooks ----


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return write_wheel(Path(wheel_directory)).name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return write_wheel(Path(wheel_directory), editable=True).name


def build_sdist(sdist_directory, config_settings=None):
    return write_sdist(Path(sdist_directory)).name


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Write a pytest-mcp-cassette wheel.")
    parser.add_argument("--out", type=Path, required=True, help="directory for the wheel")
    parser.add_argument("--binary", type=Path, help="the mcp-cassette binary to bundle")
    parser.add_argument("--platform-tag", help="override the tag read from the binary")
    args = parser.parse_args(argv)
    if args.platform_tag and not args.binary:
        parser.error("--platform-tag needs --binary: the pure wheel is py3-none-any")
    if args.binary is not None and not args.binary.is_file():
        parser.error(f"no binary at {args.binary}")
    try:
        path = write_wheel(args.out, args.binary, args.platform_tag)
    except ValueError as err:
        print(f"wheel_backend: cannot tell the platform of {args.binary}: {err}; "
              "pass --platform-tag", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
