package pdf

import "github.com/farebox/farebox/internal/invoicedoc"

// Render and RenderLetter render in the process's queue of DefaultLimits
// (a nil *Queue's): the tests' shorthand. The service renders through its
// own Queue (Queue.Render, Queue.RenderLetter).
func Render(d *invoicedoc.Document, cii []byte) ([]byte, error) { return defaultQueue.Render(d, cii) }

func RenderLetter(lt Letter) ([]byte, error) { return defaultQueue.RenderLetter(lt) }
