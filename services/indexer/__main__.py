"""`python -m services.indexer`: run the indexer stage until SIGTERM."""

from shared.bus.runtime import run_stage

if __name__ == "__main__":
    from services.indexer.main import runtime

    run_stage(runtime)
