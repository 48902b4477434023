"""The hostile tests that drive the real CLI share the end-to-end tests' fixtures."""

from tests.e2e.conftest import claude_cli, evalkit_bin, kit, new_kit  # noqa: F401
