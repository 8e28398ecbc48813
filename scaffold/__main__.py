from pyop_scaffold.cli.app import main

main()
