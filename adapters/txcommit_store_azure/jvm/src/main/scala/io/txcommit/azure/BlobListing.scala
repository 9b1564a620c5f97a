package io.txcommit.azure

import java.io.ByteArrayInputStream
import javax.xml.parsers.DocumentBuilderFactory

import org.w3c.dom.{Element, Node}

/** One blob of a List Blobs page. */
final case class ListedBlob(name: String, length: Long, lastModified: Long, isFolderMarker: Boolean)

/** One page of a List Blobs answer, and where the next one starts. */
final case class BlobListing(blobs: Seq[ListedBlob], nextMarker: Option[String])

object BlobListing {
  private val factory = {
    val f = DocumentBuilderFactory.newInstance()
    // Answers come from the store, but an XML parser never resolves external entities.
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true)
    f.setExpandEntityReferences(false)
    f
  }

  def parse(xml: Array[Byte]): BlobListing = {
    val doc = factory.synchronized(factory.newDocumentBuilder()).parse(new ByteArrayInputStream(xml))
    def children(e: Element, tag: String): Seq[Element] = {
      val nodes = e.getChildNodes
      (0 until nodes.getLength).map(nodes.item).collect {
        case c: Element if c.getTagName == tag => c
      }
    }
    def text(e: Element, tag: String): Option[String] =
      children(e, tag).headOption.map(_.getTextContent.trim).filter(_.nonEmpty)
    val root = doc.getDocumentElement
    val blobs = children(root, "Blobs").flatMap(children(_, "Blob")).map { b =>
      val props = children(b, "Properties").headOption
      val meta = children(b, "Metadata").headOption.toSeq.flatMap { m =>
        val nodes = m.getChildNodes
        (0 until nodes.getLength).map(nodes.item).filter(_.getNodeType == Node.ELEMENT_NODE)
          .map(n => n.getNodeName.toLowerCase(java.util.Locale.ROOT) -> n.getTextContent.trim)
      }.toMap
      ListedBlob(
        name = text(b, "Name").getOrElse(""),
        length = props.flatMap(text(_, "Content-Length")).map(_.toLong).getOrElse(0L),
        lastModified = props.flatMap(text(_, "Last-Modified")).map(AzureStore.millis).getOrElse(0L),
        isFolderMarker = meta.get("hdi_isfolder").exists(_.equalsIgnoreCase("true")))
    }
    BlobListing(blobs, text(root, "NextMarker"))
  }
}
