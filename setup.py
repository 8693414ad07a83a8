"""Builds psygym's compiled engine, ``psygym.engine._core``, beside the pure-Python packages.

Everything else about the package is in ``pyproject.toml``. The build backend is setuptools with
pybind11's ``Pybind11Extension``, not scikit-build-core: scikit-build-core cannot install the
folders ``agents/`` and ``experiments/`` under the import names ``psygym_agents`` and
``psygym_experiments``, which setuptools' ``package-dir`` does, editable installs included.

The extension is every ``.cc`` file of ``psygym/engine/src/`` (what all editions share) and of
each edition's ``engine/`` folder (its twin of the Python rules), found by pattern so this file
names no edition. ``PSYGYM_BUILD`` chooses the flags:

- unset: release (``-O3``). The extension is optional: without a C++17 compiler the install
  still succeeds and everything runs on the pure-Python reference (``psygym.engine`` says so);
- ``ci``: release with ``-Wall -Wextra -Werror``, and a failed build fails the install;
- ``sanitize``: a debug build under AddressSanitizer and UBSan, for the sampled differential
  and fuzz tests (``.ci/run``); any sanitizer finding aborts;
- ``python``: no extension at all (a pure-Python package that runs on the reference).
"""

import os
from glob import glob

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

MODE = os.environ.get("PSYGYM_BUILD", "release")
if MODE not in ("release", "ci", "sanitize", "python"):
    raise SystemExit(f"PSYGYM_BUILD={MODE!r}: allowed values are release, ci, sanitize, python")

SOURCES = sorted(glob("psygym/engine/src/*.cc") + glob("psygym/editions/*/engine/*.cc"))
# No fused multiply-add: the solver must sum exactly as the Python reference does.
COMPILE = ["-ffp-contract=off"]
LINK: list[str] = []
if MODE == "release":
    COMPILE += ["-O3"]
elif MODE == "ci":
    COMPILE += ["-O2", "-Wall", "-Wextra", "-Werror"]
elif MODE == "sanitize":
    SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    COMPILE += ["-O1", "-g", "-fno-omit-frame-pointer", "-Wall", "-Wextra", "-Werror", *SANITIZE]
    LINK += SANITIZE

ParallelCompile("PSYGYM_BUILD_JOBS", default=0).install()

EXTENSIONS = [
    Pybind11Extension(
        "psygym.engine._core",
        SOURCES,
        include_dirs=["psygym/engine/src"],
        cxx_std=17,
        extra_compile_args=COMPILE,
        extra_link_args=LINK,
        optional=MODE == "release",
    )
]

setup(ext_modules=[] if MODE == "python" else EXTENSIONS, cmdclass={"build_ext": build_ext})
