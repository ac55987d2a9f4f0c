"""`python -m services.verifier`: run the verifier stage until SIGTERM."""

from shared.bus.runtime import run_stage

if __name__ == "__main__":
    from services.verifier.main import runtime

    run_stage(runtime)
