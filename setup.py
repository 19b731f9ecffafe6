"""Builds the optional compiled reader (``scrapy_tagratio/_kernel.pyx``, issue 18).

Everything else is in pyproject.toml. The kernel is optional: without a C compiler (or
without lxml's headers) the build prints a warning and the package installs without it;
the pure-Python reader then gives the same results, only slower. ``Extension(optional=True)``
alone is not enough: it does not catch a missing compiler binary, so the whole
``build_ext`` step is guarded, as markupsafe and msgpack do. ``TAGRATIO_NO_KERNEL=1``
skips the build on purpose.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` whose failure leaves the package pure Python instead of failing."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, no Cython, broken headers: all the same
            self._skip(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._skip(exc)

    @staticmethod
    def _skip(exc: Exception) -> None:
        print(
            f"WARNING: the compiled reader of scrapy-tagratio was not built ({exc}); "
            "the pure-Python reader gives the same results, more slowly.",
            file=sys.stderr,
        )


def _selectolax_version() -> list[tuple[str, str]]:
    """The selectolax found at build time, as the macro the kernel's lexbor walk checks
    at import (no macro: the walk stays unused); its lexbor's structs are read."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("selectolax")
    except PackageNotFoundError:
        return []
    return [("TAGRATIO_SELECTOLAX_VERSION", f'"{found}"')]


def _extensions() -> list[Extension]:
    if os.environ.get("TAGRATIO_NO_KERNEL"):
        return []
    try:
        import lxml
        from Cython.Build import cythonize
    except ImportError as exc:
        OptionalBuildExt._skip(exc)
        return []
    kernel = Extension(
        "scrapy_tagratio._kernel",
        ["scrapy_tagratio/_kernel.pyx"],
        include_dirs=lxml.get_include(),
        define_macros=_selectolax_version(),
    )
    try:
        return cythonize([kernel], compiler_directives={"language_level": 3}, quiet=True)
    except Exception as exc:
        OptionalBuildExt._skip(exc)
        return []


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
