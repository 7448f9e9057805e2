"""`uv run python -m lecode_ls.contract`: write every generated file of the contract."""

from lecode_ls.contract.render import main

raise SystemExit(main())
