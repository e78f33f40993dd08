"""`python -m benches [suite ...]`: run the benchmark suites."""

from benches.run import main

raise SystemExit(main())
