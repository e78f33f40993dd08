"""The job's shared secret and the HMAC proofs of the rendezvous handshake.

Every rank of a multi-process group holds the same secret, `BURN_COLLECTIVE_TOKEN` (the
launcher makes one per job with `secrets.token_hex`; ranks started by hand need it set to the
same value everywhere). Nothing secret crosses the wire: each side proves it knows the token
by an HMAC-SHA256 over both sides' fresh nonces, the role and the claimed rank and world size,
so a captured proof cannot be replayed on another connection, reflected back, or moved to
another rank. The joiner proves itself to rank 0 ("join") and rank 0 to the joiner ("accept"):
a stranger cannot become a rank, and a process that took rank 0's port cannot pose as rank 0.

This authenticates; it does not encrypt. The collectives' arrays travel in clear after the
handshake, so a host that can read or rewrite the traffic between ranks is trusted anyway (use
a private network or a tunnel between hosts).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from ._errors import CollectiveError

TOKEN_ENV = "BURN_COLLECTIVE_TOKEN"
# Guessing a token must be out of reach: 16 characters of hex are 64 bits.
MIN_TOKEN = 16
NONCE_HEX = 32  # 16 random bytes, hex
MAC_HEX = 64  # SHA-256, hex
_PROTOCOL = b"burn-collective-v1"


def new_token() -> str:
    """A fresh job secret (what `python -m burn_train.launch` puts in each rank's environment)."""
    return secrets.token_hex(32)


def new_nonce() -> str:
    return secrets.token_hex(NONCE_HEX // 2)


def job_token(token: str | None, world_size: int, rank: int) -> bytes | None:
    """The secret as bytes: `token`, else `$BURN_COLLECTIVE_TOKEN`. A group of one process has
    no peers and needs none (None); a larger group without one is refused."""
    if token is None:
        token = os.environ.get(TOKEN_ENV) or None
    if world_size == 1:
        return token.encode() if token else None
    if not token:
        raise CollectiveError(
            f"rank {rank} of {world_size}: no {TOKEN_ENV}: a multi-process group needs the job's "
            "shared secret, so that no other process can join it. `python -m burn_train.launch` "
            "sets it for every rank; when starting ranks by hand, set the same value for all, e.g. "
            f"export {TOKEN_ENV}=$(python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    if len(token) < MIN_TOKEN:
        raise CollectiveError(
            f"rank {rank}: {TOKEN_ENV} has {len(token)} characters; use at least {MIN_TOKEN} "
            "random ones (python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    return token.encode()


def proof(
    token: bytes, role: str, server_nonce: str, client_nonce: str, rank: int, world: int
) -> str:
    """HMAC-SHA256 (hex) binding the role ("join" or "accept") to both nonces and the claim."""
    msg = b"|".join(
        [_PROTOCOL, role.encode(), server_nonce.encode(), client_nonce.encode(),
         str(rank).encode(), str(world).encode()]
    )  # fmt: skip
    return hmac.new(token, msg, hashlib.sha256).hexdigest()


def is_hex(value: object, length: int) -> bool:
    """Whether `value` is a string of exactly `length` lowercase hex digits."""
    return (
        isinstance(value, str)
        and len(value) == length
        and all(c in "0123456789abcdef" for c in value)
    )


def check_proof(expected: str, got: object) -> bool:
    """Constant-time comparison of a received proof with the expected one."""
    return is_hex(got, MAC_HEX) and hmac.compare_digest(expected, got)  # type: ignore[arg-type]
