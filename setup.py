# Packages are computed here because rules/ (top level in the repo) installs as hiplint.rules:
# a new rule family is a new folder under rules/ and needs no packaging change.
from setuptools import find_packages, setup

packages = find_packages(include=["hiplint", "hiplint.*"])
packages += ["hiplint.rules"] + ["hiplint.rules." + p for p in find_packages("rules")]

setup(packages=packages, package_dir={"hiplint.rules": "rules"})
