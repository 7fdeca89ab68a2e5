"""scripts/line_counts.py: what counts as a line of code, every folder counted once, and the
README's table rewritten in place."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "line_counts", os.path.join(ROOT, "scripts", "line_counts.py"))
line_counts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(line_counts)


def test_comments_blanks_and_docstrings_do_not_count():
    cpp = ('int a;  // a comment after code\n/* a block\n   comment */\n\n  // only a comment\n'
           'const char* s = "// not a comment";\nint b; /* trailing */\n')
    assert line_counts.cpp_code_lines(cpp) == 3
    py = '"""A module docstring\nover two lines."""\nimport os\n\n# a comment\n' \
         'def f():\n    """Its docstring."""\n    return """a string\nthat is code"""\n'
    assert line_counts.python_code_lines(py) == 4


def test_each_file_is_counted_once(tmp_path):
    for path in ("core/a.h", "core/cpu/b.cpp", "core/ops/c.cpp", "python/bind_x.cpp",
                 "python/wick/d.py", "newlayer/e.cpp", "docs/f.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("int x;\n" if path.endswith((".h", ".cpp")) else "x = 1\n")
    table = {row[1]: (row[3], row[4]) for row in line_counts.rows(str(tmp_path))}
    assert table == {"core": (1, 1), "core/cpu": (1, 1), "core/ops": (1, 1), "python": (1, 1),
                     "python/wick": (1, 1), "newlayer": (1, 1)}


def test_the_readme_table_is_rewritten_in_place(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{line_counts.README_BEGIN}\nold table\n{line_counts.README_END}\n"
                      "after\n")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "a.h").write_text("int x;\n")
    table = line_counts.rows(str(tmp_path))
    assert line_counts.update_readme(table, str(readme))
    text = readme.read_text()
    assert text.startswith("before\n") and text.endswith(f"{line_counts.README_END}\nafter\n")
    assert "old table" not in text and "| core | `core/` |" in text
    assert not line_counts.update_readme(table, str(readme))  # already current


def test_the_repository_readme_has_the_table():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert line_counts.README_BEGIN in text and line_counts.README_END in text
