"""scripts/check_doc_paths.py passes on the repository's docs and catches a path that is gone."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "check_doc_paths", os.path.join(ROOT, "scripts", "check_doc_paths.py"))
check_doc_paths = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_doc_paths)


def test_every_path_the_docs_name_exists():
    assert check_doc_paths.check() == []


def test_a_missing_path_is_reported(tmp_path):
    (tmp_path / "core" / "ops").mkdir(parents=True)
    (tmp_path / "core" / "ops" / "op_list.h").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "The table is `core/ops/op_list.h`; see `core/ops/op_list.h:12` and `core/ops/op_*.h`,\n"
        "`core/ops/op_list.{h}`, `nn.Module`, `./build/tools/x`, `a/b` and `bash core/run.sh 3`.\n"
        "```\ncore/in_a_fence.h\n```\n")
    (tmp_path / "docs" / "page.md").write_text(
        "Gone: `core/ops/op_table.cpp`, `core/{ops,cpu}/`, `core/<kind>/` (there is one) and\n"
        "`core/ops/<kind>.cpp` (there is none).\n")
    found = check_doc_paths.check(str(tmp_path))
    assert sorted(found) == [
        ("README.md", "core/run.sh"),
        (os.path.join("docs", "page.md"), "core/ops/<kind>.cpp"),
        (os.path.join("docs", "page.md"), "core/ops/op_table.cpp"),
        (os.path.join("docs", "page.md"), "core/{ops,cpu}/"),
    ]
