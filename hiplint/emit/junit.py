"""`junit`: JUnit XML, one test case a finding (a failure), grouped in one suite per file."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from hiplint.emit import Report, also_at, emitter

# Characters XML 1.0 forbids even escaped (C0 controls but tab, newline and CR; lone surrogates;
# U+FFFE/U+FFFF): a file named with one (`fn\x01x.cu`) made the report unreadable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x20 else "\ufffd", text)


@emitter("junit")
def to_junit(report: Report) -> str:
    n = len(report.findings)
    root = ET.Element("testsuites", name="hiplint", tests=str(max(n, 1)), failures=str(n), errors="0")
    by_file: dict[str, list] = {}
    for f in report.findings:
        by_file.setdefault(_xml_text(f.path), []).append(f)
    if not by_file:
        suite = ET.SubElement(root, "testsuite", name="hiplint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="hiplint", classname="hiplint")
    for path, findings in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(findings)),
                              failures=str(len(findings)), errors="0")
        for f in findings:
            case = ET.SubElement(suite, "testcase", name=f"{f.code} {f.name} at {f.line}:{f.column}",
                                 classname=path, file=path, line=str(f.line))
            failure = ET.SubElement(case, "failure", message=_xml_text(f.message), type=f.code)
            text = f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}"
            if f.related:
                text += f"\nalso at: {also_at(f)}"
            failure.text = _xml_text(text)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
