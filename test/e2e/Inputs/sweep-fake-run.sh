#!/bin/sh
# A stand-in for tessel-run that reports a wrong answer, as the real one does
# when the kernel's output does not match the host reference (exit 1).
cat > /dev/null
echo "matmul: stand-in on the emulator: max rel error 1.0e+00 (tolerance 2.0e-03): FAIL"
exit 1
