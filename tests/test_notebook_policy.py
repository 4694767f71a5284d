"""Committed notebooks match their sources and keep outputs only on checked cells."""

import pytest

from labutil import nbtools

SOURCES = nbtools.sources()


def test_there_are_notebooks():
    assert any(p.parent.name == "chapters" for p in SOURCES)


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_policy(src):
    assert nbtools.check(src) == []


def test_strip_keeps_only_checked_cells():
    import nbformat

    nb = nbformat.v4.new_notebook()
    a = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")
    a.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    a.execution_count = 7
    b = nbformat.v4.new_code_cell("print(2)")
    b.outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n")]
    b.execution_count = 8
    nb.cells = [a, b]
    nbtools.strip(nb)
    assert a.execution_count == 1 and a.outputs
    assert b.execution_count is None and b.outputs == []


def test_a_markdown_heading_left_in_a_code_cell_is_caught():
    # ch12 once had "# ## 9. 常见误区" inside a code cell (its `# %% [markdown]` line was missing)
    assert nbtools._COMMENTED_HEADING.search("print(x)\n#\n# ## 9. 常见误区\n")
    assert nbtools._COMMENTED_HEADING.search("# ### 7.1 测带宽")
    assert not nbtools._COMMENTED_HEADING.search("# NBVAL_CHECK_OUTPUT\nx = 1  # ## not at line start\n#comment")
