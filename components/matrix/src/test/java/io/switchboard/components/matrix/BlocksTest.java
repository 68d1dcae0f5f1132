package io.switchboard.components.matrix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class BlocksTest {
    @Test
    void multiplyMatchesTheDefinition() {
        Random rnd = new Random(1);
        Block a = Matrices.integers(rnd, 7, 5);
        Block b = Matrices.integers(rnd, 5, 3);
        Block c = Blocks.multiply(a, b);
        for (int i = 0; i < 7; i++) {
            for (int j = 0; j < 3; j++) {
                double sum = 0;
                for (int k = 0; k < 5; k++) {
                    sum += a.getValues()[i * 5 + k] * b.getValues()[k * 3 + j];
                }
                assertEquals(sum, c.getValues()[i * 3 + j]);
            }
        }
    }

    @Test
    void cutAndPasteGiveTheMatrixBack() {
        Block m = Matrices.integers(new Random(2), 11, 13);
        int[] rows = Blocks.split(11, 3);
        int[] cols = Blocks.split(13, 4);
        assertArrayEquals(new int[] {0, 4, 8, 11}, rows);
        assertArrayEquals(new int[] {0, 4, 7, 10, 13}, cols);
        Block back = Blocks.zeros(11, 13);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                Block part = Blocks.sub(m, rows[i], rows[i + 1] - rows[i], cols[j], cols[j + 1] - cols[j]);
                Blocks.put(back, part, rows[i], cols[j]);
            }
        }
        assertTrue(Blocks.identical(m, back));
    }

    @Test
    void malformedBlocksAreRefusedByName() {
        Block bad = new Block();
        bad.setRows(2);
        bad.setCols(2);
        bad.setValues(new double[3]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Blocks.multiply(bad, Blocks.identity(2)));
        assertTrue(e.getMessage().contains("2x2 but holds 3 values"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Blocks.multiply(Blocks.zeros(2, 3), Blocks.zeros(2, 3)));
    }
}
