#!/usr/bin/env python3
"""Writes the seed corpora of Tessel's fuzz targets.

    make_seeds.py OUT_DIR --source SRC [--library libTesselC.so]
                  [--tessel-gen BIN] [--only ir,npy,layout,cache]

OUT_DIR/<target>/ gets one file per seed:
  ir      every lit test input under SRC/test split at `// -----`, without its
          comment lines, and the problem IR tessel-gen prints for a few
          matmuls and attentions;
  npy     small arrays of every dtype and .npy version numpy writes;
  layout  "SHAPE\\nATTRIBUTE" for every layout attribute written in the tests
          and the docs, with a few tile shapes each;
  cache   the payloads of real cache entries (a matmul, an attention and a
          split-KV decode), compiled through the Python package with the key
          rewritten to the one FuzzCacheEntry.cpp reads with.
The checked-in regression inputs under SRC/fuzz/corpus/ are copied too.
"""
import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FUZZ_KEY = "fuzz-key"
LAYOUT_START = re.compile(r"#tessel\.(blocked|mma_operand|mma|swizzle|linear)<")
SHAPES = ["16x16", "32x32", "64x64", "128x64", "32x8", "64x16"]


def write_seed(directory, data):
    if isinstance(data, str):
        data = data.encode()
    os.makedirs(directory, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def test_files(source, suffixes):
    for root, _, files in os.walk(os.path.join(source, "test")):
        for name in sorted(files):
            if name.endswith(suffixes):
                yield os.path.join(root, name)


def ir_seeds(source, out, tessel_gen):
    for path in test_files(source, (".mlir",)):
        text = open(path, encoding="utf-8", errors="replace").read()
        for piece in re.split(r"^// -----.*$", text, flags=re.M):
            lines = [l for l in piece.splitlines()
                     if not l.lstrip().startswith("//")]
            body = "\n".join(lines).strip()
            if body:
                write_seed(out, body + "\n")
    if not tessel_gen:
        return
    problems = [
        ["matmul", "-m", "64", "-n", "64", "-k", "32", "-t", "f16"],
        ["matmul", "-m", "33", "-n", "17", "-k", "9", "-t", "bf16",
         "--transpose-b", "--bias", "n", "--activation", "gelu"],
        ["matmul", "-m", "64", "-n", "64", "-k", "64", "-t", "fp8",
         "--dynamic", "m"],
        ["attention", "-b", "1", "-h", "2", "--seq-q", "64", "--seq-kv",
         "64", "-d", "64", "-t", "f16", "--causal"],
        ["attention", "-b", "1", "-h", "4", "--kv-heads", "1", "--seq-q",
         "1", "--seq-kv", "512", "-d", "128", "-t", "bf16", "--lse"],
    ]
    for args in problems:
        result = subprocess.run([tessel_gen] + args, capture_output=True,
                                text=True, check=True)
        write_seed(out, result.stdout)


def npy_seeds(out):
    import numpy as np
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal((4, 8)).astype(np.float16),
        rng.standard_normal((3,)).astype(np.float32),
        rng.integers(0, 255, (2, 3, 4), dtype=np.uint8),
        rng.integers(-8, 8, (5, 1), dtype=np.int8),
        rng.integers(0, 65535, (2, 2), dtype=np.uint16),
        rng.integers(-9, 9, (7,), dtype=np.int32),
        np.zeros((0, 4), dtype=np.float32),
        np.float64(3.5).reshape(()),
        np.asfortranarray(np.ones((2, 3), dtype=np.float32)),
    ]
    for array in arrays:
        for version in [(1, 0), (2, 0), (3, 0)]:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, version=version)
            write_seed(out, buffer.getvalue())


def layout_attributes(text):
    """Every balanced `#tessel.<layout><...>` in `text`."""
    for match in LAYOUT_START.finditer(text):
        depth, end = 0, match.end() - 1
        while end < len(text):
            if text[end] == "<":
                depth += 1
            elif text[end] == ">" and text[end - 1] != "-":
                depth -= 1
                if depth == 0:
                    yield text[match.start():end + 1]
                    break
            end += 1


def layout_seeds(source, out):
    paths = list(test_files(source, (".mlir", ".test")))
    docs = os.path.join(source, "docs")
    paths += [os.path.join(docs, n) for n in sorted(os.listdir(docs))
              if n.endswith(".md")]
    found = set()
    for path in paths:
        text = open(path, encoding="utf-8", errors="replace").read()
        found.update(a for a in layout_attributes(text) if "\n" not in a)
    for attribute in sorted(found):
        for shape in SHAPES:
            write_seed(out, shape + "\n" + attribute)


def cache_seeds(out, source, library, tessel_gen):
    sys.path.insert(0, os.path.join(source, "python"))
    os.environ["TESSEL_LIBRARY"] = library
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TESSEL_CACHE_DIR"] = cache
        import tessel
        problems = [
            ["matmul", "-m", "32", "-n", "32", "-k", "16", "-t", "f16"],
            ["attention", "-b", "1", "-h", "1", "--seq-q", "32", "--seq-kv",
             "32", "-d", "64", "-t", "f16"],
            ["attention", "-b", "1", "-h", "2", "--seq-q", "1", "--seq-kv",
             "300", "-d", "64", "-t", "bf16"],
        ]
        for index, args in enumerate(problems):
            ir = subprocess.run([tessel_gen] + args, capture_output=True,
                                text=True, check=True).stdout
            tessel.compile(ir, chip=["gfx942", "gfx90a", "gfx950"][index])
        for name in sorted(os.listdir(cache)):
            data = open(os.path.join(cache, name), "rb").read()
            # magic line, "length checksum" line, then the payload
            payload = data.split(b"\n", 2)[2]
            facts, sections = payload.split(b"\n", 1)
            facts = json.loads(facts)
            facts["key"] = FUZZ_KEY
            write_seed(out, json.dumps(facts).encode() + b"\n" + sections)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--source", required=True)
    parser.add_argument("--library")
    parser.add_argument("--tessel-gen")
    parser.add_argument("--only", default="ir,npy,layout,cache")
    args = parser.parse_args()
    targets = args.only.split(",")
    for target in targets:
        out = os.path.join(args.out, target)
        if target == "ir":
            ir_seeds(args.source, out, args.tessel_gen)
        elif target == "npy":
            npy_seeds(out)
        elif target == "layout":
            layout_seeds(args.source, out)
        elif target == "cache":
            cache_seeds(out, args.source, args.library, args.tessel_gen)
        else:
            sys.exit("make_seeds.py: unknown target '%s'" % target)
        regression = os.path.join(args.source, "fuzz", "corpus", target)
        if os.path.isdir(regression):
            for name in sorted(os.listdir(regression)):
                shutil.copy(os.path.join(regression, name), out)
        print("%s: %d seeds" % (target, len(os.listdir(out))))


if __name__ == "__main__":
    main()
