"""Starts Python code as `python3` would (`python.py SCRIPT ARGS`, `python.py
-m MODULE ARGS` or `python.py -c CODE ARGS`) for the sanitizer test suite,
which runs it as %python.

The interpreter needed the shared AddressSanitizer runtime preloaded to load
the instrumented libTesselC.so; the Tessel tools the script starts carry
their own static runtime and refuse to run beside a second one, so the
preload must not reach them.
"""
import os
import runpy
import sys

os.environ.pop("LD_PRELOAD", None)
if len(sys.argv) >= 3 and sys.argv[1] == "-m":
    sys.argv = sys.argv[2:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
elif len(sys.argv) >= 3 and sys.argv[1] == "-c":
    code = sys.argv[2]
    sys.argv = ["-c"] + sys.argv[3:]
    exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
elif len(sys.argv) >= 2:
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
    runpy.run_path(sys.argv[0], run_name="__main__")
else:
    sys.exit("usage: python.py SCRIPT ARGS | -m MODULE ARGS | -c CODE ARGS")
