# Written by build.sh with the release's version; this is the source tree's.
__version__ = "0.0.0.dev0"
