"""Call ids: 128 bits from the secrets module, and the forms a server accepts (the Java servers'
rule), so a hostile id is refused rather than remembered."""

import re

from switchboard._client import new_call_id
from switchboard.server import well_formed_call_id


def test_a_new_call_id_is_128_random_bits_in_hex():
    ids = {new_call_id() for _ in range(10_000)}
    assert len(ids) == 10_000, "no id came twice"
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    leading = {i[0] for i in ids}
    assert len(leading) == 16, "every leading digit occurs: all 128 bits vary"
    assert all(well_formed_call_id(i) for i in ids)


def test_the_forms_clients_send_are_accepted():
    for call_id in ["0123456789abcdef" * 2, "1b4e28ba-2fa1-11d2-883f-0016d3cca427", "q83vEjRWeJASNFZ4kBI0Vg==",
                    "q83vEjRWeJASNFZ4kBI0Vg", "order-42", "x" * 128]:
        assert well_formed_call_id(call_id), call_id


def test_anything_else_is_malformed():
    for call_id in [None, "", "x" * 129, "two words", "<x/>", "caf\u00e9", "line\n", "a\x00b", b"0123"]:
        assert not well_formed_call_id(call_id), repr(call_id)
