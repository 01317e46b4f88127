"""Generate the Python protobuf and gRPC modules from ``protos/`` (``make protos``).

The generated files are committed under ``protos/python/rummy/``; ``tests/test_protos.py`` regenerates them
into a temporary folder and fails when the committed ones are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "protos"
OUT = ROOT / "protos" / "python"  # the rummy-protos distribution: the SDK and the referee both depend on it
PROTOS = ("rummy/referee/v1/referee.proto", "rummy/search/v1/search.proto")


def generate(out: Path = OUT) -> list[Path]:
    """Run protoc (from grpcio-tools) into ``out``; return the generated files."""
    from grpc_tools import protoc  # dev dependency: only needed to regenerate

    out.mkdir(parents=True, exist_ok=True)
    include = Path(protoc.__file__).parent / "_proto"
    for proto in PROTOS:
        args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}",
                f"--grpc_python_out={out}", str(PROTO_ROOT / proto)]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc failed on {proto}")
    made = []
    for proto in PROTOS:
        pkg = out / Path(proto).parent
        for part in [pkg, *pkg.relative_to(out).parents]:
            if str(part) == ".":
                continue
            init = out / part if not part.is_absolute() else part
            (init / "__init__.py").touch()
        stem = Path(proto).stem
        made += [pkg / f"{stem}_pb2.py", pkg / f"{stem}_pb2.pyi", pkg / f"{stem}_pb2_grpc.py"]
    return made


if __name__ == "__main__":
    for path in generate(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
