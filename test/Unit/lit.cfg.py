# -*- Python -*-
# Runs the GoogleTest binaries (named *Tests) under <build>/unittests.
import lit.formats

config.name = "TESSEL-Unit"
config.suffixes = []
config.test_source_root = config.unittests_dir
config.test_exec_root = config.unittests_dir
config.test_format = lit.formats.GoogleTest(".", "Tests")
