from lecode_ls.cli import main

raise SystemExit(main())
