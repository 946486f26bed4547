"""The `gpuplan` command line and the settings object built from the environment."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gpuplan")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+source"
