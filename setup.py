# Packages are computed here because rules/ (top level in the repo) installs as hiplint.rules:
# a new rule family is a new folder under rules/ and needs no packaging change.
# Namespace packages too: a folder that only holds data (rules/rename/*.toml) is still a package to
# setuptools, which otherwise warns that it "would be ignored".
from setuptools import find_namespace_packages, find_packages, setup

packages = find_packages(include=["hiplint", "hiplint.*"])
packages += ["hiplint.rules"] + ["hiplint.rules." + p
                                 for p in find_namespace_packages("rules", exclude=["*__pycache__*", "__pycache__"])]

setup(packages=packages, package_dir={"hiplint.rules": "rules"})
