"""`python -m services.navigator`: run the navigator stage until SIGTERM."""

from shared.bus.runtime import run_stage

if __name__ == "__main__":
    from services.navigator.main import runtime

    run_stage(runtime)
