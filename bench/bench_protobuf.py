"""Protobuf codec cost: decoding and encoding built-in objects, against JSON's loads and dumps of the same objects.

A protobuf request body costs the test server a decode (bytes -> the JSON object) before the JSON pipeline runs;
a protobuf-only client costs it an encode per response. This prints both per object, beside `json.loads` and the
server's JSON encoder (`pyop.apiserver.endpoints.wire.dumps`), for the sample objects of tests/protobuf (a Pod,
Deployment, Secret, ... of every shape the mapping handles, and kinds and fields new in 1.33-1.35) and a Helm-sized
Secret (one 60 KB value).
Rounds interleave the four operations; the median of the rounds is printed.

Run: `python bench/bench_protobuf.py [--rounds 7] [--repeat 300]`. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from protobuf.samples import SAMPLES, SAMPLES_1_35  # noqa: E402

from pyop.apiserver.endpoints.protobuf import decode_object, encode_object  # noqa: E402
from pyop.apiserver.endpoints.wire import dumps  # noqa: E402


def _per_call(action: Callable[[], Any], repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        action()
    return (time.process_time() - start) / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    release = base64.b64encode(os.urandom(45_000)).decode()
    helm_secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "sh.helm.release.v1.demo.v1", "labels": {"owner": "helm", "name": "demo"}},
        "type": "helm.sh/release.v1",
        "data": {"release": base64.b64encode(release.encode()).decode()},
    }
    objects = [*SAMPLES, *SAMPLES_1_35, helm_secret]
    print(f"{'object':<34}{'bytes pb/json':>16}{'pb decode':>12}{'json loads':>12}{'pb encode':>12}{'json dumps':>12}")
    for obj in objects:
        normal = decode_object(encode_object(obj))
        protobuf, text = encode_object(normal), dumps(normal)
        rounds: dict[str, list[float]] = {"pd": [], "jl": [], "pe": [], "jd": []}
        for _ in range(args.rounds):
            rounds["pd"].append(_per_call(lambda data=protobuf: decode_object(data), args.repeat))
            rounds["jl"].append(_per_call(lambda data=text: json.loads(data), args.repeat))
            rounds["pe"].append(_per_call(lambda value=normal: encode_object(value), args.repeat))
            rounds["jd"].append(_per_call(lambda value=normal: dumps(value), args.repeat))
        median = {key: statistics.median(values) for key, values in rounds.items()}
        name = f"{obj['kind']} {(obj.get('metadata') or {}).get('name', '')}"[:33]
        print(
            f"{name:<34}{f'{len(protobuf)}/{len(text)}':>16}{median['pd']:>10.1f}us{median['jl']:>10.1f}us"
            f"{median['pe']:>10.1f}us{median['jd']:>10.1f}us"
        )


if __name__ == "__main__":
    main()
