package gtfs

import (
	"bufio"
	"bytes"
	"io"
)

// csvReader reads CSV records as encoding/csv does with LazyQuotes,
// FieldsPerRecord -1 and ReuseRecord (RFC 4180; a quote inside an unquoted
// field, or one in a quoted field not followed by a comma or the line's
// end, is kept as a character; CRLF reads as LF; empty lines are skipped),
// and so never fails on malformed quoting. It is faster on GTFS's many
// unquoted lines: such a line becomes one string that the fields slice,
// without the copy and the field positions encoding/csv keeps. Equal
// output to encoding/csv's is checked by TestCSVReaderMatchesEncodingCSV
// and FuzzCSVReader.
type csvReader struct {
	r       *bufio.Reader
	numLine int    // lines read so far
	recLine int    // the line the last record started on
	raw     []byte // a line longer than the bufio buffer
	buf     []byte // a quoted record's unquoted bytes
	ends    []int  // end of each field in buf
	rec     []string
}

func newCSVReader(r io.Reader) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// readLine is encoding/csv's readLine: the next line with CRLF as LF.
func (c *csvReader) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		c.raw = append(c.raw[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = c.r.ReadSlice('\n')
			c.raw = append(c.raw, line...)
		}
		line = c.raw
	}
	n := len(line)
	if n > 0 && err == io.EOF {
		err = nil
		if line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	c.numLine++
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// read returns the next record (reused by the next call) or io.EOF.
func (c *csvReader) read() ([]string, error) {
	var line []byte
	var errRead error
	for errRead == nil {
		line, errRead = c.readLine()
		if errRead == nil && len(line) == lengthNL(line) {
			continue // empty line
		}
		break
	}
	if errRead == io.EOF {
		return nil, errRead
	}
	c.recLine = c.numLine
	if bytes.IndexByte(line, '"') < 0 {
		return c.plain(line[:len(line)-lengthNL(line)]), errRead
	}
	return c.quoted(line, errRead)
}

// plain splits a line without quotes at its commas.
func (c *csvReader) plain(line []byte) []string {
	s := string(line)
	c.rec = c.rec[:0]
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			c.rec = append(c.rec, s)
			return c.rec
		}
		c.rec = append(c.rec, s[:i])
		s, line = s[i+1:], line[i+1:]
	}
}

// quoted is encoding/csv's readRecord with LazyQuotes for a record with
// quotes (which may continue on the next lines).
func (c *csvReader) quoted(line []byte, errRead error) ([]string, error) {
	c.buf, c.ends = c.buf[:0], c.ends[:0]
field:
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, ',')
			f := line
			if i >= 0 {
				f = f[:i]
			} else {
				f = f[:len(f)-lengthNL(f)]
			}
			c.buf = append(c.buf, f...)
			c.ends = append(c.ends, len(c.buf))
			if i >= 0 {
				line = line[i+1:]
				continue field
			}
			break field
		}
		line = line[1:]
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				c.buf = append(c.buf, line[:i]...)
				line = line[i+1:]
				switch {
				case len(line) > 0 && line[0] == '"':
					c.buf = append(c.buf, '"')
					line = line[1:]
				case len(line) > 0 && line[0] == ',':
					line = line[1:]
					c.ends = append(c.ends, len(c.buf))
					continue field
				case lengthNL(line) == len(line):
					c.ends = append(c.ends, len(c.buf))
					break field
				default:
					c.buf = append(c.buf, '"')
				}
			case len(line) > 0:
				c.buf = append(c.buf, line...)
				if errRead != nil {
					break field
				}
				line, errRead = c.readLine()
				if errRead == io.EOF {
					errRead = nil
				}
			default:
				c.ends = append(c.ends, len(c.buf))
				break field
			}
		}
	}
	s := string(c.buf)
	c.rec = c.rec[:0]
	prev := 0
	for _, end := range c.ends {
		c.rec = append(c.rec, s[prev:end])
		prev = end
	}
	return c.rec, errRead
}
