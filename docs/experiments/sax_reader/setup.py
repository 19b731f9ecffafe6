"""Builds the prototype ``saxpass`` in place: ``python setup.py build_ext --inplace``."""

import lxml
from Cython.Build import cythonize
from setuptools import Extension, setup

extension = Extension("saxpass", ["saxpass.pyx"], include_dirs=lxml.get_include())
setup(ext_modules=cythonize([extension], quiet=True))
