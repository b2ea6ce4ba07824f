"""robodyn's build in a temporary folder: `pip install ./lib` (and the wheel builds of the tests)
leave no lib/build/ and no egg-info behind. Everything else is in pyproject.toml."""
import atexit
import shutil
import tempfile

from setuptools import setup
from setuptools.command.build import build
from setuptools.command.egg_info import egg_info

_TMP = tempfile.mkdtemp(prefix="robodyn-build-")
atexit.register(shutil.rmtree, _TMP, True)


class _Build(build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = _TMP


class _EggInfo(egg_info):
    def initialize_options(self):
        super().initialize_options()
        self.egg_base = _TMP


setup(cmdclass={"build": _Build, "egg_info": _EggInfo})
