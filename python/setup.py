"""The metadata is in pyproject.toml; this only records, in the installed package, the
repository it was installed from (ssmv/_source.py), so that an installed copy finds that
repository's build/release/ssmv as the copy in the source tree does."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class build_py_recording_the_source(build_py):
    def run(self):
        super().run()
        repo = Path(__file__).resolve().parent.parent
        out = Path(self.build_lib) / "ssmv" / "_source.py"
        out.write_text(f'"""Written by setup.py at install time."""\nREPOSITORY = {str(repo)!r}\n')


setup(cmdclass={"build_py": build_py_recording_the_source})
