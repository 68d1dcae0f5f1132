package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The memo answers what hashing would, for the same string, an equal copy, or a new text. */
class SchemaDigestsTest {
    private static final String SCHEMA = "<xs:schema xmlns:xs='http://www.w3.org/2001/XMLSchema'/>";

    @Test
    void aDigestIsTheSha256OfTheUtf8Text() {
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", SchemaDigests.of("abc"));
        assertNull(new SchemaDigests.Memo(4).of(null));
    }

    @Test
    void theMemoAnswersEqualCopiesAndNewTextsAlike() {
        SchemaDigests.Memo memo = new SchemaDigests.Memo(2);
        String first = memo.of(SCHEMA);
        assertEquals(SchemaDigests.of(SCHEMA), first);
        assertEquals(first, memo.of(SCHEMA), "the same string again");
        assertEquals(first, memo.of(new String(SCHEMA)), "an equal string held elsewhere (another instance's copy)");
        // more distinct texts than the memo keeps by text: each still gets its own digest
        for (int i = 0; i < 10; i++) {
            String text = SCHEMA.replace("/>", "><!-- " + i + " --></xs:schema>");
            assertEquals(SchemaDigests.of(text), memo.of(text));
            assertNotEquals(first, memo.of(text));
        }
        assertEquals(first, memo.of(new String(SCHEMA)), "a text let go by text is hashed again, not mistaken");
    }
}
