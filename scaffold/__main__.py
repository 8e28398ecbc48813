from scaffold.cli.app import main

main()
