"""`python -m capdoctor` runs the same CLI as the `capdoctor` console script."""

from capdoctor.cli.commands import main

if __name__ == "__main__":
    main()
