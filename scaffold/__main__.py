from pyop_scaffold.cli.entry import main

main()
