"""Builds ``kernelsax`` in place: the repository's ``_kernel.pyx`` with the SAX driver
(``sax_driver.pxi``) appended, as one module (the driver uses ``_Events`` and its helpers).

    python setup_kernelsax.py build_ext --inplace   (in this folder)
"""

import os
from pathlib import Path

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

here = Path(__file__).resolve().parent
# The repository's kernel (this folder is docs/experiments/sax_reader), or the one named by
# TAGRATIO_KERNEL_PYX for a copy outside it.
kernel = Path(
    os.environ.get("TAGRATIO_KERNEL_PYX") or here.parents[2] / "scrapy_tagratio/_kernel.pyx"
)
(here / "kernelsax.pyx").write_text(kernel.read_text() + (here / "sax_driver.pxi").read_text())
extension = Extension("kernelsax", [str(here / "kernelsax.pyx")], include_dirs=lxml.get_include())
setup(ext_modules=cythonize([extension], quiet=True, compiler_directives={"language_level": 3}))
