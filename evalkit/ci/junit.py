"""JUnit XML for CI systems, in the element set of the Jenkins xUnit plugin's junit-10.xsd.

Everything a case carries is an id, a count, a rate, a reason token or a path: a final message
or transcript may restate a Task, so none of it is ever passed in here.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evalkit.outpaths import replace_file

Outcome = Literal["passed", "failure", "error", "skipped"]


@dataclass
class Case:
    classname: str
    name: str
    outcome: Outcome = "passed"
    message: str = ""
    kind: str = ""


@dataclass
class Suite:
    name: str
    cases: list[Case] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)


def to_xml(suites: list[Suite]) -> bytes:
    """One `<testsuites>` document with the counts every reader expects on each level (the
    root carries no `skipped`: junit-10 does not define it there)."""
    root = ET.Element("testsuites")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for index, suite in enumerate(suites):
        counts = {
            "tests": len(suite.cases),
            "failures": sum(1 for c in suite.cases if c.outcome == "failure"),
            "errors": sum(1 for c in suite.cases if c.outcome == "error"),
            "skipped": sum(1 for c in suite.cases if c.outcome == "skipped"),
        }
        for key, count in counts.items():
            totals[key] += count
        attrs = {"name": suite.name, "id": str(index)}
        attrs.update((key, str(count)) for key, count in counts.items())
        node = ET.SubElement(root, "testsuite", attrs)
        if suite.properties:
            props = ET.SubElement(node, "properties")
            for key, text in suite.properties.items():
                ET.SubElement(props, "property", {"name": key, "value": text})
        for case in suite.cases:
            element = ET.SubElement(
                node, "testcase", {"classname": case.classname, "name": case.name}
            )
            if case.outcome != "passed":
                detail = {"message": case.message}
                if case.kind and case.outcome != "skipped":
                    detail["type"] = case.kind
                ET.SubElement(element, case.outcome, detail)
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def write(path: Path, suites: list[Suite]) -> None:
    """The file written whole beside and renamed; a path that cannot be written is one line
    (its place was checked by `records.pages.target.check_target` before the command began)."""
    replace_file(path, to_xml(suites))
