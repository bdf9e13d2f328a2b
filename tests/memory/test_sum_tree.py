import numpy as np
import pytest

from rl.memory.sum_tree import SumTree


def tree_1234() -> SumTree:
    tree = SumTree(4)
    tree.update(np.arange(4), np.array([1.0, 2.0, 3.0, 4.0]))
    return tree


def test_total_min_and_find_by_hand():
    tree = tree_1234()
    assert tree.total == 10.0
    assert tree.min == 1.0
    # Cumulative sums 1, 3, 6, 10: leaf i covers [cum[i-1], cum[i]).
    prefixes = np.array([0.0, 0.5, 0.999, 1.0, 1.5, 2.999, 3.0, 3.5, 5.999, 6.0, 9.9])
    np.testing.assert_array_equal(tree.find(prefixes), [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3])


def test_find_keeps_query_shape():
    tree = tree_1234()
    assert tree.find(np.array([[0.5, 9.9], [1.5, 3.5]])).tolist() == [[0, 3], [1, 2]]


def test_update_recomputes_total_and_min():
    tree = tree_1234()
    tree.update(np.array([0, 3]), np.array([5.0, 0.5]))  # leaves [5, 2, 3, 0.5]
    assert tree.total == 10.5
    assert tree.min == 0.5
    np.testing.assert_array_equal(tree.find(np.array([4.9, 5.0, 9.9, 10.1])), [0, 1, 2, 3])


def test_duplicate_indices_last_write_wins():
    tree = tree_1234()
    tree.update(np.array([1, 2, 1, 1]), np.array([100.0, 7.0, 50.0, 0.25]))
    np.testing.assert_array_equal(tree.get(np.arange(4)), [1.0, 0.25, 7.0, 4.0])
    assert tree.total == 12.25
    assert tree.min == 0.25


def test_non_power_of_two_capacity_never_returns_unused_leaves():
    tree = SumTree(3)  # 4 leaves internally; leaf 3 is never set
    tree.update(np.arange(3), np.array([1.0, 1.0, 1.0]))
    assert tree.min == 1.0
    # At and past the total (float rounding at the top of the tree) -> last used leaf.
    np.testing.assert_array_equal(tree.find(np.array([2.5, 3.0, 3.0 + 1e-9, 1e9])), [2, 2, 2, 2])


def test_partly_filled_tree_guards_the_top_edge():
    tree = SumTree(8)
    tree.update(np.arange(5), np.full(5, 0.1))
    total = tree.total
    edge = np.array([total, np.nextafter(total, np.inf), total * (1 + 1e-12)])
    np.testing.assert_array_equal(tree.find(edge), [4, 4, 4])
    assert tree.min == pytest.approx(0.1)


def test_zero_leaf_in_the_middle_is_skipped():
    tree = SumTree(4)
    tree.update(np.arange(4), np.array([1.0, 0.0, 0.0, 2.0]))
    np.testing.assert_array_equal(tree.find(np.array([0.5, 1.0, 1.0 + 1e-12, 2.9])), [0, 3, 3, 3])


def test_rejects_bad_values_and_indices():
    tree = SumTree(4)
    with pytest.raises(ValueError, match="finite and >= 0"):
        tree.update(np.array([0]), np.array([np.nan]))
    with pytest.raises(ValueError, match="finite and >= 0"):
        tree.update(np.array([0]), np.array([-1.0]))
    with pytest.raises(ValueError, match="in \\[0, 4\\)"):
        tree.update(np.array([4]), np.array([1.0]))
    assert tree.total == 0.0
    assert tree.min == np.inf
